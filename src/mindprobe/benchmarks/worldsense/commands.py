"""WorldSense CLI verbs and run analysis: `analyse -t/--run`, `export`, `generate`.

Runs are analysed by exactly the code that analyses upstream results files: a run's records
become a (Key, resp) results table plus the trial fields the scoring needs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pandas as pd
from rich.console import Console
from rich.table import Table

from mindprobe.benchmarks.worldsense.data import (
    load_results,
    load_testset,
    results_filename,
    results_from_pairs,
    write_results_file,
)
from mindprobe.benchmarks.worldsense.generate_cmd import GenerateCommand
from mindprobe.benchmarks.worldsense.metrics import JOIN_FIELDS, WorldSenseAnalysis, analyse
from mindprobe.benchmarks.worldsense.report import format_cell, render_text, to_json
from mindprobe.core.store import RunStore
from mindprobe.errors import UsageError


def _run_frames(run_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """(trials, results) tables of one mindprobe run, from its records alone."""
    store = RunStore(run_dir)
    manifest = store.load_manifest()
    if manifest.get("benchmark") != "worldsense":
        raise UsageError(f"{run_dir} is not a worldsense run")
    records = [r for r in store.records() if "error" not in r]
    prompting, _, label = run_dir.name.partition("___")
    return (*_frames(records, prompting, label or "model"), manifest)


def _frames(records: list[dict[str, Any]], prompting: str, label: str
            ) -> tuple[pd.DataFrame, pd.DataFrame]:
    cols = [c for c in JOIN_FIELDS if records and c in records[0]]
    trials = pd.DataFrame.from_records([{c: r.get(c) for c in cols} for r in records],
                                       columns=cols or list(JOIN_FIELDS))
    results = results_from_pairs(((int(r["Key"]), r["resp"]) for r in records), prompting, label)
    return trials, results


def metrics_from_records(records: list[dict[str, Any]], prompting: str, label: str
                         ) -> dict[str, Any]:
    ok = [r for r in records if "error" not in r]
    if not ok:
        return {"accuracy": {}, "bias": {}, "n_trials": 0, "headline": None}
    warnings: list[str] = []
    analysis = analyse(*_frames(ok, prompting, label), warn=warnings.append)
    doc = to_json(analysis)
    run = doc["accuracy"].get(f"{prompting}/{label}", {})
    head = run.get("ALL") or next(iter(run.values()), {"mean": None})
    doc.update(n_trials=len(ok), headline={"accuracy": head["mean"]},
               warnings=[w for w in warnings if "PARTIAL" not in w])
    return doc


def render_metrics(metrics: dict[str, Any], console: Console) -> None:
    """One table per run in the doc: accuracy and bias per problem with 95% CIs."""
    for run, problems in metrics.get("accuracy", {}).items():
        bias = metrics["bias"].get(run, {})
        t = Table(title=f"WorldSense {run} ({metrics.get('n_trials', '?')} trials)",
                  title_justify="left")
        for col in ("problem", "accuracy % (95% CI)", "bias (95% CI)"):
            t.add_column(col, justify="left" if col == "problem" else "right")
        for name, stat in problems.items():
            b = bias.get(name, {})
            t.add_row(name, _cell(stat, "acc"), _cell(b, "bias"))
        console.print(t)
    for w in metrics.get("warnings") or []:
        console.print(f"[yellow]{w}[/yellow]")


def _cell(stat: dict[str, Any], measure: str) -> str:
    if not stat or stat.get("mean") is None:
        return "nan"
    sem = (stat["conf95"] / 1.96) if stat.get("conf95") is not None else float("nan")
    return format_cell(stat["mean"], sem, measure)


# -- analyse ---------------------------------------------------------------------------------
def analyse_command(args: argparse.Namespace, err: Console) -> int:
    """`-t DIR` (upstream layout) and/or `--run DIR...`: one analysis over all of them."""
    runs = [Path(r) for r in (args.run or [])]
    if not args.testset and not runs:
        raise UsageError("give -t TESTSET_DIR and/or --run RUN_DIR")

    def warn(message: str) -> None:
        err.print(message, markup=False, highlight=False)

    trials_parts, results_parts = [], []
    title = args.testset or ", ".join(map(str, runs))
    if args.testset:
        err.print(f"Loading trials data from {args.testset}")
        trials_parts.append(load_testset(args.testset))
        results = load_results(args.testset)
        if len(results):
            results_parts.append(results)
    seen = {tuple(x) for part in results_parts
            for x in part[["prompting", "modelname"]].drop_duplicates().to_numpy()}
    for run in runs:
        trials, results, _ = _run_frames(run)
        label = (results["prompting"].iloc[0], results["modelname"].iloc[0]) if len(results) else None
        if label in seen:
            raise UsageError(
                f"{run} has the same prompting/model labels {label[0]}/{label[1]} as another "
                "results source; analyse them separately (or export the run under a new name)"
            )
        seen.add(label)
        if not args.testset:
            trials_parts.append(trials)
        results_parts.append(results)
    if not results_parts:
        raise UsageError(f"no results to analyse in {title} (results/*___results.jsonl)")
    trials = trials_parts[0] if len(trials_parts) == 1 else _union_trials(trials_parts)
    analysis = analyse(trials, pd.concat(results_parts, ignore_index=True), warn=warn)
    _emit(analysis, title, args.json)
    return 0


def _union_trials(parts: list[pd.DataFrame]) -> pd.DataFrame:
    cols = [c for c in JOIN_FIELDS if all(c in p for p in parts)]
    return pd.concat([p[cols] for p in parts], ignore_index=True).drop_duplicates("Key")


def _emit(analysis: WorldSenseAnalysis, title: str, as_json: bool) -> None:
    text = render_text(analysis, title)
    if as_json:
        sys.stderr.write(text)
        sys.stdout.write(json.dumps(to_json(analysis), indent=2, allow_nan=False) + "\n")
    else:
        sys.stdout.write(text)


# -- export ----------------------------------------------------------------------------------
class ExportCommand:
    def add_arguments(self, g: argparse._ArgumentGroup) -> None:
        g.add_argument("--run", required=True, help="worldsense: the run directory to export")
        g.add_argument("--out", required=True, help="worldsense: a test-set folder; the results "
                       "file goes to OUT/results/ (trials.jsonl.bz2 is added if missing)")
        g.add_argument("--data-dir", help="worldsense: where the official trials are")

    def run(self, args: argparse.Namespace, err: Console) -> int:
        run_dir, out = Path(args.run), Path(args.out)
        _, results, manifest = _run_frames(run_dir)
        prompting, label = results["prompting"].iloc[0], results["modelname"].iloc[0]
        trials_path = out / "trials.jsonl.bz2"
        if not trials_path.exists():
            self._write_trials(manifest, trials_path, args.data_dir)
        path = out / "results" / results_filename(prompting, label)
        write_results_file(path, zip(results["Key"].tolist(), results["resp"].tolist(), strict=True))
        err.print(f"wrote {len(results)} results to {path}")
        err.print(f"analyse with: mindprobe analyse worldsense -t {out}")
        return 0

    @staticmethod
    def _write_trials(manifest: dict[str, Any], path: Path, data_dir: str | None) -> None:
        from mindprobe.benchmarks.worldsense import sets
        from mindprobe.benchmarks.worldsense.generate import (
            STANDARD_PROBLEMS,
            generate_trials,
            write_testset,
        )
        from mindprobe.core.data import resolve

        variant = manifest["variant"]
        if variant == "fresh":
            seed = manifest["data"]["seed"]
            trials = generate_trials(seed, manifest["data"]["tuples_per_cell"], sizes=(3, 4, 5),
                                     problems=STANDARD_PROBLEMS)
            write_testset(trials, path.parent)
            return
        src = resolve("worldsense", sets.DATA_FILES, sets.TRIALS_PATH[variant],
                      Path(data_dir) if data_dir else None)
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, path)


COMMANDS: dict[str, Any] = {"export": ExportCommand(), "generate": GenerateCommand()}
