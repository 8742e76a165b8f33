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
        from mindprobe.benchmarks.mr_gsm8k.report import upstream_results
        from mindprobe.benchmarks.mr_gsm8k.upstream import rescore_upstream
        from mindprobe.core.inputs import check_regular

        for f in args.upstream_results:  # the JSON files upstream's evaluation scripts write
            check_regular(f, "--upstream-results", "results file")
        results = rescore_upstream(args.upstream_results,
                                   response_key=args.upstream_response_key,
                                   manual_key=args.upstream_manual_key)
        render_results(upstream_results(results), out)
        emit_json(args.json, next(iter(results.values())) if len(results) == 1 else results)
        return 0
    if not args.run:
        return None
    docs: dict[str, Any] = {}
    runs = []
    for path in args.run:
        run = load_run(path, "mr_gsm8k")
        runs.append(run)
        docs[path] = show_run(out, path, run, run.results(args.judge_label, args.data_dir))
    from mindprobe.benchmarks.mr_gsm8k.fresh_pairing import contamination_pairs

    for official, fresh, res in contamination_pairs(runs):
        out.print(f"[bold]contamination signal[/bold]: {official.dir} against {fresh.dir}")
        render_results(res, out)
        docs[f"contamination: {official.dir} vs {fresh.dir}"] = res.to_json()
    emit_json(args.json, next(iter(docs.values())) if len(docs) == 1 else docs)
    return 0


def export(args: Any, err: Any) -> int:
    """`export mr_gsm8k --fresh`: fresh items in the MR-GSM8K schema, for others to use."""
    import json
    from pathlib import Path

    from mindprobe.benchmarks.mr_gsm8k.data import SAMPLE_SEED, load_items
    from mindprobe.benchmarks.mr_gsm8k.fresh import generate, parse_kinds
    from mindprobe.benchmarks.mr_gsm8k.task import MRGSM8KBenchmark
    from mindprobe.core.data import benchmark_folder
    from mindprobe.core.files import check_target, write_file

    check_target(Path(args.out), replace=args.force, flag="--out")  # before the work
    folder = benchmark_folder("mr_gsm8k", args.data_dir, MRGSM8KBenchmark.data_files)
    loaded = load_items("fresh", folder, args.data_file, lambda m: err.print(f"warning: {m}"))
    seed = SAMPLE_SEED if args.seed is None else args.seed
    made = generate(loaded.items, seed, args.share_correct, parse_kinds(args.error_kinds))
    write_file(Path(args.out), (json.dumps(it, ensure_ascii=False) + "\n" for it in made.items),
               replace=args.force, flag="--out")
    err.print(f"{args.out}: {made.summary()} (seed {seed})")
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
    Verb("export", export, (
        Arg("--fresh", action="store_true", required=True,
            help="write fresh graded solutions (as `mr_gsm8k:fresh` runs them) in the MR-GSM8K "
            "schema, one JSON object per line"),
        Arg("--out", required=True, metavar="FILE.jsonl", help="the file to write"),
        Arg("--force", action="store_true", help="replace an existing --out file"),
        Arg("--data-file", metavar="FILE", help="the base records (default: the official "
            "MR-GSM8K.json in the data folder)"),
        Arg("--data-dir", help="the data folder holding MR-GSM8K.json"),
        Arg("--seed", type=int, range=(0, 2**32 - 1),
            help="generator seed (default: the sample seed, 20231117)"),
        Arg("--share-correct", type=float, range=(0.0, 1.0), metavar="SHARE", help="share of correct solutions, "
            "0-1 (default: the official file's, 1427 of 3000)"),
        Arg("--error-kinds", metavar="KINDS", help="calculation, operation, quantity "
            "(comma-separated; default all)"),
    )),
]
