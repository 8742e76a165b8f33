"""The parsers of `export` and of the verbs benchmarks declare, built from their
`core.verbs.Verb` declarations (a benchmark never touches argparse), with the named benchmark's
flags for the command given."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from mindprobe.commands import verbs_of
from mindprobe.commands.export import (
    GENERIC_FORMATS,
    add_generic_export,
    generic_export_epilog,
    generic_format,
)
from mindprobe.commands.run_options import (
    add_benchmark_options,
    add_common_run_options,
    ranged,
)
from mindprobe.errors import MindprobeError

if TYPE_CHECKING:
    from mindprobe.core.verbs import Verb

#: Commands a benchmark's verb may not be named like (`analyse` and `export` it may extend).
BUILT_IN = ("run", "analyse", "analyze", "report", "profile", "data", "list", "runs", "models",
            "published")
EXPORT_HELP = ("export a run: any run as an Inspect log (--format inspect), or in a "
               "benchmark's own format")


def declared_verbs(warn: bool = False) -> dict[str, dict[str, str]]:
    """verb -> {benchmark: its one line of help}: the verbs the benchmarks declare (`warn`:
    about those that cannot be offered)."""
    from mindprobe.registry import BENCHMARKS

    out: dict[str, dict[str, str]] = {}
    for name, bench in BENCHMARKS.items():
        for verb, text in bench.verbs.items():
            if verb in BUILT_IN or not verb.isidentifier():
                if warn:
                    sys.stderr.write(f"warning: benchmark {name}: its verb {verb!r} is ignored "
                                     "(the name of a built-in command, or not a word)\n")
                continue
            out.setdefault(verb, {})[name] = text
    return out


class _EpilogAsIs(argparse.HelpFormatter):
    """Wraps the description as usual; prints an epilog's lines as they are."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" in text:
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def add_verb_arguments(p: argparse.ArgumentParser, verb: Verb, bench: str) -> None:
    """A benchmark's verb's declared flags (and the run flags, where it takes them)."""
    if verb.run_options:
        add_benchmark_options(p, bench)
        add_common_run_options(p.add_argument_group("common options"), bench)
    groups: dict[str, Any] = {}
    for arg in verb.arguments:
        target: Any = p
        if arg.one_of:
            if arg.one_of not in groups:
                groups[arg.one_of] = p.add_mutually_exclusive_group(
                    required=arg.one_of in verb.required_one_of)
            target = groups[arg.one_of]
        options = dict(arg.options)
        if arg.range is not None:
            options["type"] = ranged(arg.flags[0], options["type"], *arg.range)
        target.add_argument(*arg.flags, **options)


def add_benchmark_verbs(sub: Any, analyse: argparse.ArgumentParser, bench: str | None,
                        command: str | None, argv: list[str]) -> None:
    """`export` and the verbs benchmarks declare; the named benchmark's flags for the command
    given (and for `analyse`)."""
    declared = declared_verbs(warn=True)
    for verb in dict.fromkeys(["export", *declared]):
        by_bench = declared.get(verb, {})
        offered = ", ".join(by_bench)
        texts = list(dict.fromkeys(by_bench.values()))
        summary = EXPORT_HELP if verb == "export" else (
            texts[0] if len(texts) == 1 else "a benchmark's own verb")
        own = by_bench.get(bench or "", summary)
        v = sub.add_parser(verb, help=f"{summary} ({offered})", description=f"{own[0].upper()}"
                           f"{own[1:]}; offered by {offered}. `mindprobe {verb} BENCH --help` "
                           "lists its options.")
        v.add_argument("benchmark", nargs="?" if verb == "export" else None,
                       help=f"one of {offered}"
                       + (" (not needed with a --format other than upstream)" if verb == "export" else ""))
        if verb == "export" and not bench and not generic_format(argv):
            v.epilog = generic_export_epilog()
            v.formatter_class = _EpilogAsIs
        if verb == "export":
            v.add_argument("--format", choices=["upstream", *GENERIC_FORMATS],
                           default="upstream",
                           help="upstream: the benchmark's own result format (default); any "
                           "run: inspect (an Inspect log for `inspect view`), parquet and hf "
                           "(one row per record), mlflow and wandb (a run or a profile, to "
                           "the tracker)")
            fmt = generic_format(argv)
            if fmt and verb == command:
                add_generic_export(v, fmt)
                continue
        if bench and verb == command:
            if bench not in by_bench:
                any_run = ("; any run exports as --format inspect, parquet, hf, mlflow or "
                           "wandb: mindprobe export --format parquet --run DIR --out "
                           "FILE.parquet") if verb == "export" else ""
                raise MindprobeError(f"{bench} has no `{verb}`; benchmarks that do: "
                                     f"{offered}{any_run}")
            add_verb_arguments(v, verbs_of(bench)[verb], bench)
    if bench and command in ("analyse", "analyze") and "analyse" in verbs_of(bench):
        add_verb_arguments(analyse, verbs_of(bench)["analyse"], bench)

