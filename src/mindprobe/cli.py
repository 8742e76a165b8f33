"""`mindprobe` command line: parse, dispatch, and turn user errors into one line + exit 2."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from mindprobe import __version__
from mindprobe.core.benchmark import benchmark_names, get_benchmark
from mindprobe.errors import MindprobeError


class _Parser(argparse.ArgumentParser):
    """argparse that reports bad flags as our one-line usage error (exit 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise MindprobeError(f"{message} (see `{self.prog} --help`)")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="mindprobe", description=__doc__)
    p.add_argument("--version", action="version", version=f"mindprobe {__version__}")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    benches = [get_benchmark(n) for n in benchmark_names()]

    r = sub.add_parser("run", help="run a benchmark against a model (resumes if re-run)")
    r.add_argument("benchmark", help="BENCH[:VARIANT], see `mindprobe list`")
    r.add_argument("--model", required=True, help="model spec, see `mindprobe models`")
    r.add_argument("--limit", type=int, help="only the first N items")
    r.add_argument("--concurrency", type=int, help="items in flight (default per backend)")
    r.add_argument("--seed", type=int, help="seed for sampling/generation (default per benchmark)")
    r.add_argument("--data-dir", help="folder with the official files (same layout as shared/data/<bench>)")
    r.add_argument("--runs-dir", default="runs", help="where runs are stored (default ./runs)")
    r.add_argument("--no-cache", action="store_true", help="do not read or write the response cache")
    r.add_argument("--cache", help="response cache file (default ~/.cache/mindprobe/responses.sqlite)")
    r.add_argument("--retry-errors", action="store_true", help="re-run items that ended in errors")
    r.add_argument("--timeout", type=float, default=300.0, help="seconds per request (default 300)")
    r.add_argument("--max-tokens", type=int, help="cap on tokens per reply (default per benchmark)")
    r.add_argument("--max-attempts", type=int, default=6, help="attempts per request (default 6)")
    r.add_argument("--json", action="store_true", help="print only the metrics JSON on stdout")
    for b in benches:
        b.add_arguments(r.add_argument_group(f"{b.name} options"))

    a = sub.add_parser("analyse", aliases=["analyze"], help="recompute metrics of runs or upstream results")
    a.add_argument("benchmark")
    a.add_argument("--run", action="append", help="a mindprobe run directory (repeatable)")
    a.add_argument("--json", action="store_true", help="print only JSON on stdout")
    for b in benches:
        if hasattr(b, "add_analyse_arguments"):
            b.add_analyse_arguments(a.add_argument_group(f"{b.name} options"))

    for verb, help_text in (
        ("generate", "generate a fresh dataset"),
        ("export", "export a run in the benchmark's upstream result format"),
        ("judge", "(re-)judge a finished run with a judge model"),
    ):
        owners = [b for b in benches if verb in getattr(b, "commands", {})]
        if not owners:
            continue
        v = sub.add_parser(verb, help=help_text)
        v.add_argument("benchmark", choices=[b.name for b in owners])
        for b in owners:
            b.commands[verb].add_arguments(v.add_argument_group(f"{b.name} options"))

    d = sub.add_parser("data", help="official data files")
    dsub = d.add_subparsers(dest="data_command", required=True, parser_class=_Parser)
    f = dsub.add_parser("fetch", help="download and verify a benchmark's official files")
    f.add_argument("benchmark")
    f.add_argument("--data-dir", help="destination folder (default: the mindprobe data cache)")
    f.add_argument("--all", action="store_true", help="also large optional files "
                   "(e.g. WorldSense's 1M-record training set)")

    sub.add_parser("list", help="benchmarks and their variants")
    rs = sub.add_parser("runs", help="runs with status and headline metric")
    rs.add_argument("--runs-dir", default="runs")
    sub.add_parser("models", help="the model specs mindprobe understands")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    err = Console(stderr=True, highlight=False)
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    try:
        args = build_parser().parse_args(argv)
        args.debug = debug
        from mindprobe.commands import dispatch

        return dispatch(args, err)
    except MindprobeError as exc:
        if debug:
            raise
        err.print(Text.assemble(("error:", "bold red"), " ", str(exc)), soft_wrap=True)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
