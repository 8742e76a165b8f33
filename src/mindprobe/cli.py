"""mindprobe runs published LLM cognition benchmarks (`mindprobe list` names them) against
any model: an OpenAI-compatible server, the OpenAI API, a local GGUF, or the embedded
Gemma 3 270M. Runs resume after any interruption, replies are cached, and every number comes
with its confidence interval.

The only module that knows argparse: it resolves the benchmark first, then offers exactly that
benchmark's options, and turns user errors into one line and exit code 2.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from mindprobe.commands.run_options import (
    add_benchmark_options,
    add_common_run_options,
    add_verbose,
    ranged,
)
from mindprobe.errors import MindprobeError, did_you_mean
from mindprobe.version import __version__

if TYPE_CHECKING:
    from mindprobe.core.verbs import Verb

DESCRIPTION = (
    "Run published LLM cognition benchmarks faithfully against any model: resumable, cached, "
    "concurrent, with confidence intervals. Start with `mindprobe list` and `mindprobe models`; "
    "`mindprobe run BENCH --help` shows a benchmark's own options."
)
#: Built-in verbs whose first argument is a benchmark (its options are added once it is
#: known); benchmarks add verbs of their own (`mindprobe.core.verbs`).
BENCH_VERBS = ("run", "analyse", "analyze", "export")
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


#: `export --format F` for any run, whatever its benchmark: F -> what --out is.
GENERIC_FORMATS = {
    "inspect": "the .eval file to write",
    "parquet": "the .parquet file to write",
    "hf": "the folder to save the Hugging Face dataset in (save_to_disk)",
    "mlflow": None,
    "wandb": None,
}


def _generic_format(argv: list[str]) -> str | None:
    """`export --format F` (or --format=F) where F exports any run (not the benchmark's own)."""
    for i, a in enumerate(argv):
        value = a.split("=", 1)[1] if a.startswith("--format=") else (
            argv[i + 1] if a == "--format" and i + 1 < len(argv) else None)
        if value in GENERIC_FORMATS:
            return value
    return None


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


def add_generic_export(v: argparse.ArgumentParser, fmt: str) -> None:
    """The flags of `export --format F` for any run (F in GENERIC_FORMATS)."""
    tracker = GENERIC_FORMATS[fmt] is None
    v.add_argument("--run", required=True, help="the run directory to export" + (
        " (or a profile folder: one parent run, one nested run per benchmark)" if tracker
        else ""))
    if tracker:
        v.add_argument("--to", metavar="URI" if fmt == "mlflow" else "PROJECT",
                       help="the MLflow tracking URI (default: MLFLOW_TRACKING_URI, else "
                       "MLflow's default)" if fmt == "mlflow" else "the W&B project (default "
                       "mindprobe; WANDB_MODE=offline writes files for `wandb sync`)")
        add_verbose(v)
        return
    v.add_argument("--out", required=fmt != "hf", help=GENERIC_FORMATS[fmt])
    v.add_argument("--force", action="store_true", help="replace an existing --out (the "
                   "previous one stays whole until the new one is complete)")
    if fmt == "hf":
        v.add_argument("--push", metavar="REPO", help="also push the dataset to the Hugging "
                       "Face Hub as REPO (needs HF_TOKEN)")


def generic_export_epilog() -> str:
    """What `export --format F` takes for any run, format by format (read from the parsers
    `add_generic_export` builds): `export --help` lists what its errors point to."""
    lines = ["any run, by --format (`mindprobe export --format F --help` for each):"]
    for fmt in GENERIC_FORMATS:
        p = argparse.ArgumentParser(add_help=False)
        add_generic_export(p, fmt)
        flags = []
        for a in p._actions:
            flag = a.option_strings[0] + ("" if a.nargs == 0 else
                                          f" {a.metavar or a.dest.upper()}")
            flags.append(flag if a.required else f"[{flag}]")
        lines += textwrap.wrap(f"--format {fmt}: {' '.join(flags)}", 78,
                               initial_indent="  ", subsequent_indent="      ")
    return "\n".join(lines)


def add_benchmark_verbs(sub: Any, analyse: argparse.ArgumentParser, bench: str | None,
                        command: str | None, argv: list[str]) -> None:
    """`export` and the verbs benchmarks declare; the named benchmark's flags for the command
    given (and for `analyse`)."""
    from mindprobe.commands import verbs_of

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
        if verb == "export" and not bench and not _generic_format(argv):
            v.epilog = generic_export_epilog()
            v.formatter_class = _EpilogAsIs
        if verb == "export":
            v.add_argument("--format", choices=["upstream", *GENERIC_FORMATS],
                           default="upstream",
                           help="upstream: the benchmark's own result format (default); any "
                           "run: inspect (an Inspect log for `inspect view`), parquet and hf "
                           "(one row per record), mlflow and wandb (a run or a profile, to "
                           "the tracker)")
            fmt = _generic_format(argv)
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
