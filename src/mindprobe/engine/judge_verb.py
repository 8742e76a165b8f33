"""`mindprobe judge BENCH --run DIR --judge SPEC`: the common judge pass over a finished run, as
a verb a benchmark with a judge pass declares (`judge_verb()` in its `verbs.py`); the pass
itself is `mindprobe.engine.judge`. Light at import: `judge BENCH --help` reads it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mindprobe.core.verbs import Arg, Verb
from mindprobe.engine.settings import RANGES

JUDGE_ARGS = (
    Arg("--run", required=True, help="the run directory to judge"),
    Arg("--judge", required=True, help="judge model spec (any `mindprobe models` spec)"),
    Arg("--judge-label", help="name of this judge's verdict file (default: the judge model's "
        "label)"),
    Arg("--concurrency", type=int, range=RANGES["concurrency"], help="judge calls in flight"),
    Arg("--max-tokens", type=int, range=RANGES["max_tokens"],
        help="judge reply cap (default: the benchmark's)"),
    Arg("--no-cache", action="store_true", help="do not use the response cache"),
    Arg("--cache", help="response cache file"),
    Arg("--timeout", type=float, default=300.0, range=RANGES["timeout"],
        help="seconds per request"),
    Arg("--max-attempts", type=int, default=6, range=RANGES["max_attempts"],
        help="attempts per request"),
    Arg("--data-dir", metavar="DIR", help="the data the run is graded and scored against: "
        "the benchmark's folder or the data root holding it (default: the folder the run "
        "read)"),
    Arg("--json", action="store_true", help="print only JSON on stdout"),
)


def judge(args: Any, err: Any) -> int:
    """Run the judge pass the flags describe and print its results."""
    from mindprobe.core.output import emit_json, tables_console
    from mindprobe.core.results import render_results
    from mindprobe.engine.judge import JudgeSettings, judge_run
    from mindprobe.engine.settings import Reporter

    settings = JudgeSettings(
        label=args.judge_label, concurrency=args.concurrency, max_tokens=args.max_tokens,
        cache=not args.no_cache, cache_file=args.cache, timeout=args.timeout,
        max_attempts=args.max_attempts, debug=getattr(args, "debug", False),
        data_dir=args.data_dir)
    out = judge_run(args.run, args.judge, settings, Reporter(err), args.benchmark)
    err.print(f"judge {out.label}: {out.n_items} item(s) to grade; {out.n_verdicts} "
              f"verdict(s) recorded, {out.failed} failed, {out.judged_in_run} judged in "
              "the run itself")
    render_results(out.results, tables_console(args.json))
    emit_json(args.json, out.results.to_json())
    return 1 if out.failed else 0


def judge_verb(extra: tuple[Arg, ...] = (),
               check: Callable[[Any], None] | None = None) -> Verb:
    """The judge verb, with a benchmark's own extra flags and a check of them before the pass
    (e.g. that they agree with the run)."""
    def run(args: Any, err: Any) -> int:
        if check is not None:
            check(args)
        return judge(args, err)

    return Verb("judge", run, (*JUDGE_ARGS, *extra))
