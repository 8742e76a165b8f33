"""MR-GSM8K verbs: `judge` (T3 of a finished run, the common judge pass) and `analyse`
(runs with every judge compared, or upstream eval-results files rescored)."""

from __future__ import annotations

from typing import Any

from mindprobe.core.verbs import Arg, Verb
from mindprobe.engine.judge_verb import judge_verb


def analyse(args: Any, err: Any) -> int | None:
    from mindprobe.core.output import emit_json, show_run, tables_console
    from mindprobe.core.results import render_results
    from mindprobe.core.store import load_run

    out = tables_console(args.json)
    if args.upstream_results:
        from pathlib import Path

        from mindprobe.benchmarks.mr_gsm8k.report import upstream_results
        from mindprobe.benchmarks.mr_gsm8k.upstream import rescore_upstream
        from mindprobe.errors import UsageError

        for f in args.upstream_results:
            if not Path(f).is_file():
                raise UsageError(f"{f}: no such upstream eval-results file (the JSON files "
                                 "upstream's evaluation scripts write)")
        results = rescore_upstream(args.upstream_results,
                                   response_key=args.upstream_response_key,
                                   manual_key=args.upstream_manual_key)
        render_results(upstream_results(results), out)
        emit_json(args.json, next(iter(results.values())) if len(results) == 1 else results)
        return 0
    if not args.run:
        return None
    docs: dict[str, Any] = {}
    for path in args.run:
        run = load_run(path, "mr_gsm8k")
        docs[path] = show_run(out, path, run, run.results(args.judge_label, args.data_dir))
    emit_json(args.json, next(iter(docs.values())) if len(docs) == 1 else docs)
    return 0


VERBS = [
    Verb("analyse", analyse, (
        Arg("--upstream-results", nargs="+", metavar="FILE",
            help="upstream eval-results files to rescore"),
        Arg("--upstream-response-key", metavar="FIELD",
            help="field of the model's reply in those files (default: the one field ending in "
            "the upstream suffix)"),
        Arg("--upstream-manual-key", metavar="FIELD",
            help="field of the human reason verdicts in those files"),
        Arg("--judge-label", help="with --run, the judge whose verdicts fill the top-level "
            "metrics (default: the run's own judge)"),
    )),
    judge_verb(),
]
