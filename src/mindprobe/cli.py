"""mindprobe runs published LLM cognition benchmarks (`mindprobe list` names them) against
any model: an OpenAI-compatible server, the OpenAI API, a local GGUF, or the embedded
Gemma 3 270M. Runs resume after any interruption, replies are cached, and every number comes
with its confidence interval.

The front door: it resolves the benchmark first, then builds a parser offering exactly that
benchmark's options (each verb's flags are declared beside its command in `commands/`), and turns
user errors into one line and exit code 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from mindprobe.commands.run_options import add_benchmark_options, add_common_run_options
from mindprobe.commands.verb_parsers import add_benchmark_verbs, declared_verbs
from mindprobe.errors import MindprobeError, did_you_mean
from mindprobe.version import __version__

DESCRIPTION = (
    "Run published LLM cognition benchmarks faithfully against any model: resumable, cached, "
    "concurrent, with confidence intervals. Start with `mindprobe list` and `mindprobe models`; "
    "`mindprobe run BENCH --help` shows a benchmark's own options."
)
#: Built-in verbs whose first argument is a benchmark (its options are added once it is
#: known); benchmarks add verbs of their own (`mindprobe.core.verbs`).
BENCH_VERBS = ("run", "analyse", "analyze", "export")


class _Parser(argparse.ArgumentParser):
    """argparse that reports bad flags as our one-line usage error (exit 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        bench = _bench_in_argv(_ARGV)
        verb = next((a for a in _ARGV if not a.startswith("-")), None)
        # a benchmark's verb: its own help lists the benchmark's options
        where = f"mindprobe {verb} {bench}" if bench and verb else self.prog
        near = self._near_flags(message, verb) if message.startswith("unrecognized") else ""
        if bench and message.startswith("unrecognized arguments"):
            raise MindprobeError(f"{message}: not options of {bench}{near} (see `{where} "
                                 "--help`)")
        raise MindprobeError(f"{message}{near} (see `{where} --help`)")

    def _near_flags(self, message: str, verb: str | None) -> str:
        """`; did you mean '--limit'?` for each unknown flag near one the command has."""
        known = list(self._option_string_actions)
        for action in self._actions:  # the command's own flags (argparse reports at the top)
            if isinstance(action, argparse._SubParsersAction) and verb in action.choices:
                known += list(action.choices[verb]._option_string_actions)
        words = message.partition(":")[2].split()
        return "".join(did_you_mean(w.partition("=")[0], known)
                       for w in words if w.startswith("--"))

    def _get_values(self, action: argparse.Action, arg_strings: list[str]) -> Any:
        """No option takes an empty value (`--runs-dir ""` would be the current folder)."""
        if action.const != "" and action.nargs not in (argparse.PARSER, argparse.REMAINDER):
            from mindprobe.core.paths import refuse_empty

            for value in arg_strings:
                refuse_empty(value, "/".join(action.option_strings) or str(action.metavar
                                                                         or action.dest))
        return super()._get_values(action, arg_strings)



def _bench_in_argv(argv: list[str]) -> str | None:
    """The benchmark named after a bench verb, if any and if registered."""
    from mindprobe.registry import BENCHMARKS, split_bench_spec

    verbs = {*BENCH_VERBS, *declared_verbs()}
    for i, a in enumerate(argv):
        if a in verbs:
            rest = [x for x in argv[i + 1:] if not x.startswith("-")]
            if rest:
                name = split_bench_spec(rest[0])[0]
                return name if name in BENCHMARKS else None
            return None
        if not a.startswith("-"):
            return None
    return None



_ARGV: list[str] = []


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    argv = list(argv)
    _ARGV[:] = argv
    bench = _bench_in_argv(argv)
    p = _Parser(prog="mindprobe", description=DESCRIPTION)
    p.add_argument("--version", action="version", version=f"mindprobe {__version__}")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND",
                           help="what to do; `mindprobe COMMAND --help` for its options")

    r = sub.add_parser("run", help="run a benchmark against a model (resumes if re-run)",
                       description="Run BENCH[:VARIANT] against --model. Re-running the same "
                       "command resumes; `mindprobe run BENCH --help` lists its options.")
    r.add_argument("benchmark", help="BENCH[:VARIANT], see `mindprobe list`")
    if bench:  # its own options first in --help, then the ones every benchmark shares
        add_benchmark_options(r, bench)
    add_common_run_options(r.add_argument_group("common options") if bench else r, bench)

    a = sub.add_parser("analyse", aliases=["analyze"],
                       help="recompute metrics of runs, or score upstream result files")
    a.add_argument("benchmark", help="the benchmark, see `mindprobe list`")
    a.add_argument("--run", action="append", help="a mindprobe run directory (repeatable)")
    a.add_argument("--data-dir", metavar="DIR", help="the data a run is scored against: "
                   "the benchmark's folder or the data root holding it (default: the folder "
                   "the run read)")
    a.add_argument("--json", action="store_true", help="print only JSON on stdout")
    command = next((x for x in argv if not x.startswith("-")), None)
    add_benchmark_verbs(sub, a, bench, command, argv)

    from mindprobe.commands.profile import add_profile_parser
    from mindprobe.commands.report import add_report_parser

    add_report_parser(sub)
    add_profile_parser(sub, detailed=command == "profile" and bool({"-h", "--help"} & set(argv)))

    d = sub.add_parser("data", help="download and verify official data files")
    dsub = d.add_subparsers(dest="data_command", required=True, parser_class=_Parser)
    f = dsub.add_parser("fetch", help="download and verify a benchmark's official files, or "
                        "an embedded model's GGUF")
    f.add_argument("benchmark", nargs="+", help="the benchmark(s), see `mindprobe list`; or an "
                   "embedded model (smollm2, gemma), see `mindprobe models`")
    f.add_argument("--data-dir", help="destination folder (default: the mindprobe data cache); "
                   "with several benchmarks, a root holding one folder per benchmark")
    f.add_argument("--all", action="store_true", help="also large optional files "
                   "(e.g. a benchmark's large training set)")

    pr = dsub.add_parser("prompts", help="print a benchmark's prompt templates (upstream's "
                         "wording, read from its files) as a --prompt-file to edit")
    pr.add_argument("benchmark", help="the benchmark, see `mindprobe list`")
    pr.add_argument("--data-dir", help="folder with the upstream files (default: the mindprobe "
                    "data cache)")

    pb = sub.add_parser("published", help="the papers' and leaderboards' published results, "
                        "read from upstream's pinned files",
                        description="Every published number a benchmark reads from upstream's "
                        "files (fetched by `mindprobe data fetch BENCH`), with its setting, "
                        "data, metric, judge and source.")
    pb.add_argument("benchmark", nargs="?", help="one benchmark (default: all)")
    pb.add_argument("--data-dir", help="a benchmark's data folder or the data root (one "
                    "folder per benchmark, as shared/data; default: the mindprobe data cache)")
    pb.add_argument("--json", action="store_true", help="print JSON on stdout: every number "
                    "exactly as upstream prints it")
    ls = sub.add_parser("list", help="benchmarks and their variants")
    ls.add_argument("--json", action="store_true", help="print JSON on stdout")
    rs = sub.add_parser("runs", help="runs with status and headline metric")
    rs.add_argument("--runs-dir", default="runs", help="where runs are stored (default ./runs)")
    rs.add_argument("--json", action="store_true", help="print JSON on stdout")
    ms = sub.add_parser("models", help="the model specs mindprobe understands")
    ms.add_argument("--json", action="store_true", help="print JSON on stdout")
    return p


def _print_error(message: str) -> None:
    from rich.console import Console
    from rich.text import Text

    err = Console(stderr=True, highlight=False)
    err.print(Text.assemble(("error:", "bold red"), " ", message), soft_wrap=True)


def _fail(message: str, as_json: bool) -> int:
    """One error line on stderr; under --json also the one JSON document stdout promises."""
    from mindprobe.core.secrets import redact

    message = redact(message)
    _print_error(message)
    if as_json:
        import json

        sys.stdout.write(json.dumps({"error": message, "exit_code": 2}) + "\n")
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--version"]:  # answered before building any parser
        sys.stdout.write(f"mindprobe {__version__}\n")
        return 0
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    from mindprobe.core.process import interrupt_status
    from mindprobe.core.secrets import remember_environment

    interrupt_status(clear=True)
    remember_environment()  # API keys and tokens in the environment: masked wherever they go
    try:
        args = build_parser(argv).parse_args(argv)
        args.debug = debug
        from rich.console import Console

        from mindprobe.commands import dispatch

        return dispatch(args, Console(stderr=True, highlight=False))
    except MindprobeError as exc:
        if debug:
            raise
        return _fail(str(exc), "--json" in argv)
    except BrokenPipeError:
        # stdout's reader left (`mindprobe published | head`): stop quietly, status 1 as rich
        # gives when its own write finds the pipe closed
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as exc:
        # A file the user named (or a folder they point at) that cannot be read or written:
        # their environment, not a bug, so one line. Errors without a file name stay loud.
        if debug or exc.filename is None:
            raise
        return _fail(f"{exc.filename}: {exc.strerror or exc}", "--json" in argv)
    except KeyboardInterrupt as exc:
        from mindprobe.errors import Interrupted

        if not isinstance(exc, Interrupted) and argv[:1] in (["run"], ["profile"]):
            from mindprobe.core.secrets import command_line

            _print_error("interrupted before the run started; nothing was recorded. Run again "
                         f"with: {command_line(argv)}")
        return interrupt_status()  # 130 after Ctrl-C, 143 after SIGTERM


def run_program() -> NoReturn:
    """The `mindprobe` program (console script, `python -m mindprobe.cli`): `main` in a process
    tuned for it (see core/process.py); the Python API and tests call `main` itself."""
    from mindprobe.core.process import exit_now, terminate_as_interrupt, tune_gc

    tune_gc()
    terminate_as_interrupt()
    exit_now(main())


if __name__ == "__main__":
    run_program()
