"""One module per CLI verb (and one per benchmark for its own verbs); `dispatch` routes to them.

A benchmark's verbs (WorldSense `export`/`generate`/`analyse -t`, MR-GSM8K `judge`/`analyse
--upstream-results`) live in `commands/<benchmark>.py` as objects with `add_arguments(parser)`
and `run(args, err)`; they call the benchmark's library functions.
"""

from __future__ import annotations

import argparse
import importlib
from typing import TYPE_CHECKING, Any

from mindprobe.errors import UsageError

if TYPE_CHECKING:
    from rich.console import Console


def verbs_of(bench: str) -> dict[str, Any]:
    """The benchmark's own verbs (empty when it has none); cheap: no pandas at import."""
    try:
        module = importlib.import_module(f"mindprobe.commands.{bench}")
    except ModuleNotFoundError as exc:
        if exc.name == f"mindprobe.commands.{bench}":
            return {}
        raise
    return getattr(module, "VERBS", {})


def dispatch(args: argparse.Namespace, err: Console) -> int:
    cmd = args.command
    if cmd == "run":
        from mindprobe.commands.run import cmd_run

        return cmd_run(args, err)
    if cmd in ("list", "models", "runs", "data"):
        from mindprobe.commands import info

        return getattr(info, f"cmd_{cmd}")(args, err)
    if cmd == "report":
        from mindprobe.commands.report import cmd_report

        return cmd_report(args, err)
    if cmd == "export" and args.format == "inspect":
        from mindprobe.commands.export import cmd_export_inspect

        return cmd_export_inspect(args, err)
    if cmd == "profile":
        from mindprobe.commands.profile import cmd_profile

        return cmd_profile(args, err)
    if args.benchmark is None:
        raise UsageError(f"`mindprobe {cmd}` needs a benchmark: mindprobe {cmd} BENCH …")
    from mindprobe.registry import info as bench_info
    from mindprobe.registry import split_bench_spec

    name = bench_info(split_bench_spec(args.benchmark)[0]).name  # `sweep sort:250-20` too
    verbs = verbs_of(name)
    if cmd in ("analyse", "analyze"):
        if "analyse" in verbs:
            code = verbs["analyse"].run(args, err)
            if code is not None:
                return code
        from mindprobe.commands.analyse import cmd_analyse

        return cmd_analyse(args, err)
    return verbs[cmd].run(args, err)  # a verb the benchmark lacks is refused by the parser
