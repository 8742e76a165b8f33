"""WorldSense verbs: `analyse -t TESTSET` (the paper's tables, upstream results files and runs
in one analysis), `export` (a run as an upstream results file) and `generate` (fresh sets)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

from mindprobe.core.files import check_target, copy_file
from mindprobe.core.output import emit_json
from mindprobe.core.paths import check_parent
from mindprobe.core.store import load_run
from mindprobe.core.verbs import Arg, Verb
from mindprobe.errors import DataError, UsageError


def _run_frames(run_dir: Path) -> tuple[Any, Any, dict[str, Any]]:
    from mindprobe.benchmarks.worldsense.runs import frames

    run = load_run(run_dir, "worldsense")
    records = [r for r in run.records if "error" not in r]
    return (*frames(records, run.prompting, run.model_label), run.manifest)


def analyse_testset(args: Any, err: Any) -> int | None:
    """`-t DIR` and/or `--run DIR...`: one analysis over all of them (None: plain --run)."""
    if not args.testset:
        return None
    import pandas as pd

    from mindprobe.benchmarks.worldsense.data import load_testset
    from mindprobe.benchmarks.worldsense.metrics import analyse
    from mindprobe.benchmarks.worldsense.upstream import load_results

    runs = [Path(r) for r in (args.run or [])]

    def warn(message: str) -> None:
        err.print(message, markup=False, highlight=False)

    err.print(f"Loading trials data from {args.testset}")
    trials = load_testset(args.testset, texts=False)  # scoring never reads the texts
    results_parts = []
    results = load_results(args.testset)
    if len(results):
        results_parts.append(results)
    seen = {tuple(x) for part in results_parts
            for x in part[["prompting", "modelname"]].drop_duplicates().to_numpy()}
    for run in runs:
        _, results, _ = _run_frames(run)
        label = (results["prompting"].iloc[0], results["modelname"].iloc[0]) \
            if len(results) else None
        if label in seen:
            raise UsageError(
                f"{run} has the same prompting/model labels {label[0]}/{label[1]} as another "
                "results source; analyse them separately (or export the run under a new name)"
            )
        seen.add(label)
        results_parts.append(results)
    if not results_parts:
        raise UsageError(f"no results to analyse in {args.testset} (results/*___results.jsonl)")
    analysis = analyse(trials, pd.concat(results_parts, ignore_index=True), warn=warn)
    _emit(analysis, args.testset, args.json)
    return 0


def _emit(analysis: Any, title: str, as_json: bool) -> None:
    from mindprobe.benchmarks.worldsense.report import render_text, to_json

    text = render_text(analysis, title)
    (sys.stderr if as_json else sys.stdout).write(text)
    emit_json(as_json, {"benchmark": "worldsense", "testset": str(title),
                        **to_json(analysis), "warnings": list(analysis.warnings)})


def export(args: Any, err: Any) -> int:
    from mindprobe.benchmarks.worldsense.upstream import results_filename, write_results_file

    run_dir, out = Path(args.run), Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file; give a folder")
    check_parent(out, "--out")
    check_target(out / "trials.jsonl.bz2", replace=True, flag="--out")  # not into a run
    _, results, manifest = _run_frames(run_dir)
    prompting, label = results["prompting"].iloc[0], results["modelname"].iloc[0]
    check_target(out / "results" / results_filename(prompting, label), replace=args.force,
                 flag="--out")
    if len(results) < (manifest.get("n_items") or 0):
        err.print(f"[yellow]warning[/yellow]: the run is {manifest.get('status')} "
                  f"({len(results)} of {manifest.get('n_items', '?')} items); the export "
                  "holds only those", highlight=False)
    trials_path = out / "trials.jsonl.bz2"
    if not trials_path.exists():
        try:
            _write_trials(manifest, trials_path, args.data_dir)
        except BaseException:
            if out.is_dir() and not any(out.iterdir()):
                out.rmdir()  # leave nothing behind on failure
            raise
    path = out / "results" / results_filename(prompting, label)
    write_results_file(path, zip(results["Key"].tolist(), results["resp"].tolist(),
                                 strict=True), replace=args.force, flag="--out")
    err.print(f"wrote {len(results)} results to {path}", soft_wrap=True, highlight=False)
    err.print(f"analyse with: mindprobe analyse worldsense -t {shlex.quote(str(out))}",
              soft_wrap=True, highlight=False)
    return 0

def _write_trials(manifest: dict[str, Any], path: Path, data_dir: str | None) -> None:
    from mindprobe.benchmarks.worldsense import sets
    from mindprobe.benchmarks.worldsense.generate import (
        STANDARD_PROBLEMS,
        generate_trials,
        write_testset,
    )
    from mindprobe.core.data import benchmark_folder, resolve

    data = manifest.get("data") or {}
    path.parent.mkdir(parents=True, exist_ok=True)
    if Path(str(data.get("file", ""))).is_absolute():  # a run of a --data-file
        if not Path(data["file"]).is_file():
            raise DataError(f"the run was made on {data['file']}, which is no longer "
                            "there; put it back to export this run")
        copy_file(data["file"], path)
        return
    variant = manifest["variant"]
    if variant == "fresh":
        trials = generate_trials(data["seed"], data["tuples_per_cell"], sizes=(3, 4, 5),
                                 problems=STANDARD_PROBLEMS)
        write_testset(trials, path.parent)
        return
    recorded = Path(str(data.get("path", "")))
    if not data_dir and recorded.is_file():  # where the run found it, if still there
        src = resolve("worldsense", sets.DATA_FILES, sets.TRIALS_PATH[variant],
                      recorded.parent.parent)
    else:
        src = resolve("worldsense", sets.DATA_FILES, sets.TRIALS_PATH[variant],
                      benchmark_folder("worldsense", data_dir, sets.DATA_FILES))
    copy_file(src, path)


def _csv(text: str | None) -> list[str] | None:
    return [x.strip() for x in text.split(",") if x.strip()] if text else None


def generate(args: Any, err: Any) -> int:
    from mindprobe.benchmarks.worldsense.generate import (
        STANDARD_PROBLEMS,
        generate_trials,
        write_chat,
        write_testset,
    )
    from mindprobe.benchmarks.worldsense.skins import TEST_SKINS

    if args.n < 1:
        raise UsageError(f"--n must be a positive number; got {args.n}")
    try:
        sizes = [int(s) for s in _csv(args.sizes) or []]
    except ValueError:
        raise UsageError(f"--sizes expects integers like 3,4,5, got {args.sizes!r}") from None
    try:
        trials = generate_trials(
            args.seed, args.n, sizes=sizes,
            problems=_csv(args.problems) or STANDARD_PROBLEMS,
            skins=_csv(args.skins) or TEST_SKINS,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    out = Path(args.out)
    path = write_chat(trials, out) if args.format == "chat" else write_testset(trials, out)
    err.print(f"wrote {len(trials)} trials to {path}", soft_wrap=True, highlight=False)
    if args.format == "testset":
        err.print(f"run it with: mindprobe run worldsense --data-file "
                  f"{shlex.quote(str(path))} --model …", soft_wrap=True, highlight=False)
    return 0


VERBS = [
    Verb("analyse", analyse_testset, (
        Arg("-t", "--testset", help="a test-set folder with trials.jsonl.bz2 and "
            "results/*___results.jsonl (the upstream layout): prints the paper's tables"),
    )),
    Verb("export", export, (
        Arg("--run", required=True, help="the run directory to export"),
        Arg("--out", required=True, help="a test-set folder; the results file goes to "
            "OUT/results/ (trials.jsonl.bz2 is added if missing)"),
        Arg("--data-dir", help="where the official trials are (if not in the cache)"),
        Arg("--force", action="store_true", help="replace the run's results file in OUT "
            "if one is there already"),
    )),
    Verb("generate", generate, (
        Arg("--seed", type=int, default=0, range=(0, 2**32 - 1),
            help="generator seed (default 0)"),
        Arg("--n", type=int, default=100, range=(1, 100_000),
            help="tuples per (problem, size) cell (default 100)"),
        Arg("--sizes", default="3,4,5", help="entity counts, e.g. 3,4,5,6"),
        Arg("--problems", help="problem families (default: the 6 standard; also "
            "Infer.extrema, Infer.parallel)"),
        Arg("--skins", help="skins (default: the 18 test skins)"),
        Arg("--format", choices=["testset", "chat"], default="testset",
            help="testset = OUT/trials.jsonl.bz2 in the official schema (run it with "
            "`mindprobe run worldsense --data-file OUT/trials.jsonl.bz2`); chat = "
            "fine-tuning records (dialog_history, target_message) to file OUT"),
        Arg("--out", required=True, help="output folder (testset) or file (chat)"),
    )),
]
