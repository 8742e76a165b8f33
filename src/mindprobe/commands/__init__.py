"""One module per CLI verb; `dispatch` routes to them.

A benchmark's own verbs (and its flags for `analyse` / `export`) are declared by the benchmark
(`mindprobe.core.verbs`: `VERBS` in the `verbs` module beside its class); the CLI builds their
flags from the declarations and runs them here.
"""

from __future__ import annotations

import argparse
import importlib
from typing import TYPE_CHECKING

from mindprobe.core.verbs import Verb, verbs_module
from mindprobe.errors import MindprobeError, UsageError

if TYPE_CHECKING:
    from rich.console import Console


def verbs_of(bench: str) -> dict[str, Verb]:
    """The benchmark's own verbs by name (empty when it has none); cheap: a verbs module
    imports nothing heavy."""
    from mindprobe.registry import info

    found = info(bench)
    module = verbs_module(found.task)
    try:
        declared = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != module:
            raise
        if found.verbs:
            raise MindprobeError(f"benchmark {bench} names the verbs {', '.join(found.verbs)} "
                                 f"but has no module {module} declaring them") from None
        return {}
    verbs = {v.name: v for v in getattr(declared, "VERBS", ())}
    missing = [v for v in found.verbs if v not in verbs]
    if missing:
        raise MindprobeError(f"benchmark {bench} names the verb {missing[0]!r} but {module} "
                             "declares no such Verb in VERBS")
    return verbs


def _run_verb(verb: Verb, args: argparse.Namespace, err: Console) -> int | None:
    """A benchmark's verb; one that takes the run flags gets the options given and a way to
    run the benchmark with them (`Verb.run_options`)."""
    if verb.run_options:
        from mindprobe.commands.run import bench_option_values, run_command

        args.bench_options = bench_option_values(args)
        args.run_benchmark = lambda options: run_command(args, err, options, embedded=True)
    return verb.run(args, err)


def dispatch(args: argparse.Namespace, err: Console) -> int:
    cmd = args.command
    if cmd == "run":
        from mindprobe.commands.run import cmd_run

        return cmd_run(args, err)
    if cmd in ("list", "models", "runs", "data"):
        from mindprobe.commands import info

        return getattr(info, f"cmd_{cmd}")(args, err)
    if cmd == "published":
        from mindprobe.commands.published import cmd_published

        return cmd_published(args, err)
    if cmd == "report":
        from mindprobe.commands.report import cmd_report

        return cmd_report(args, err)
    if cmd == "export" and args.format != "upstream":
        from mindprobe.commands.export import cmd_export_any

        return cmd_export_any(args, err)
    if cmd == "profile":
        from mindprobe.commands.profile import cmd_profile

        return cmd_profile(args, err)
    if args.benchmark is None:
        raise UsageError(f"`mindprobe {cmd}` needs a benchmark: mindprobe {cmd} BENCH …")
    from mindprobe.registry import info as bench_info
    from mindprobe.registry import split_bench_spec

    name = bench_info(split_bench_spec(args.benchmark)[0]).name  # `BENCH:VARIANT` too
    verbs = verbs_of(name)
    if cmd in ("analyse", "analyze"):
        if "analyse" in verbs:
            code = _run_verb(verbs["analyse"], args, err)
            if code is not None:
                return code
        from mindprobe.commands.analyse import cmd_analyse

        return cmd_analyse(args, err)
    code = _run_verb(verbs[cmd], args, err)  # a verb the benchmark lacks is refused earlier
    return 0 if code is None else code
