"""Presentation of a WorldSense analysis: upstream-style text tables and a JSON summary (§3.6)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from mindprobe.benchmarks.worldsense.data import load_testset
from mindprobe.benchmarks.worldsense.metrics import (
    _BIAS,
    RUN_KEYS,
    Warn,
    WorldSenseAnalysis,
    analyse,
    warn_stderr,
)
from mindprobe.benchmarks.worldsense.run_scores import accuracy_interval, label_sort_key
from mindprobe.benchmarks.worldsense.upstream import RESULTS_SUFFIX, load_results
from mindprobe.core.stats import Z95, exact_mean
from mindprobe.errors import DataError
from mindprobe.report.plots import by_setting, color, frame_of, minus, num, plus
from mindprobe.report.svg import Series, bar_chart

if TYPE_CHECKING:
    from mindprobe.core.results import Results
    from mindprobe.core.store import Run

CELL_STYLES = ("value_ci", "value", "ci")
RULE_STARS = "*" * 74
RULE_DASHES = "-" * 74
TITLE_OVERALL = "    AVERAGE ACCURACY ACROSS ALL PROBLEMS (with 95% confidence interval)"
TITLE_ACCURACY = "    ACCURACY for each of the problems  (with 95% confidence interval)"
TITLE_BIAS = "    BIAS for each of the problems (with 95% confidence interval)"


def _sorted_labels(labels: pd.Index, fields: Sequence[str]) -> list[Any]:
    if len(fields) == 1:
        return sorted(labels, key=lambda v: label_sort_key(fields[0], v))
    return sorted(labels, key=lambda t: tuple(label_sort_key(f, v) for f, v in zip(fields, t,
                                                                                   strict=True)))


def format_cell(mean: float, sem: float, measure: str, cell_style: str = "value_ci") -> str:
    """Accuracy as percent with 1 decimal, bias with 2 decimals; CI = 1.96·SEM; NaN → 'nan'."""
    scale, digits = (100.0, 1) if measure == "acc" else (1.0, 2)
    value = f"{scale * mean:.{digits}f}"
    ci = f"{scale * Z95 * sem:.{digits}f}"
    if cell_style == "value_ci":
        return f"{value} ({ci})"
    if cell_style == "value":
        return value
    if cell_style == "ci":
        return ci
    raise ValueError(f"unknown cell_style {cell_style!r}; choose one of {CELL_STYLES}")


def pivot_pretty(table: pd.DataFrame, index: str | Sequence[str], columns: str | Sequence[str],
                 cell_style: str = "value_ci", measure: str | None = None) -> pd.DataFrame:
    """Pivot a by-group table into formatted string cells, rows/columns in the spec's order.

    ``measure`` ("acc" or "bias") picks the number format; by default it is read from the
    table made by accuracy_by_group/bias_by_group.
    """
    measure = measure or table.attrs.get("measure")
    if measure not in ("acc", "bias"):
        raise ValueError("pass measure='acc' or 'bias' (the table does not say which it holds)")
    rows = [index] if isinstance(index, str) else list(index)
    cols = [columns] if isinstance(columns, str) else list(columns)
    cells = table[rows + cols].astype(object)  # plain labels: no unobserved categories
    cells["_cell"] = [format_cell(m, s, measure, cell_style)
                      for m, s in zip(table["mean"], table["sem"], strict=True)]
    pivot = cells.pivot(index=rows if len(rows) > 1 else rows[0],
                        columns=cols if len(cols) > 1 else cols[0], values="_cell")
    return pivot.reindex(index=_sorted_labels(pivot.index, rows),
                         columns=_sorted_labels(pivot.columns, cols))


def _section(title: str, frame: pd.DataFrame) -> str:
    if frame.empty:
        body = "(no complete tuples to report)"
    else:  # pandas pads the index-name row with spaces; upstream's output has none
        body = "\n".join(line.rstrip() for line in frame.to_string().split("\n"))
    return f"\n{RULE_DASHES}\n{title}\n{RULE_DASHES}\n{body}\n"


def render_text(analysis: WorldSenseAnalysis, testset_dir: str | Path) -> str:
    """Banner plus the upstream tables; the overall table only with more than one problem."""
    out = [f"{RULE_STARS}\n*\n*  ANALYSING RESULTS OF TESTSET {testset_dir}\n*\n{RULE_STARS}\n"]
    run_rows = list(RUN_KEYS)
    if analysis.acc_table["problemname"].nunique() > 1:
        out.append(_section(TITLE_OVERALL, pivot_pretty(analysis.accuracy_overall,
                                                        "modelname", "prompting")))
    out.append(_section(TITLE_ACCURACY, pivot_pretty(analysis.accuracy_by_problem,
                                                     run_rows, "problemname")))
    out.append(_section(TITLE_BIAS, pivot_pretty(analysis.bias_by_problem,
                                                 run_rows, "problemname")))
    return "".join(out)


def _ordered(table: pd.DataFrame, fields: Sequence[str]) -> pd.DataFrame:
    """Rows of ``table`` in the spec's label order for ``fields``."""
    order = sorted(range(len(table)), key=lambda i: tuple(
        label_sort_key(f, table[f].iloc[i]) for f in fields))
    return table.iloc[order]


def _stat(row: pd.Series) -> dict[str, float | None]:
    return {name: None if math.isnan(row[name]) else float(row[name])
            for name in ("mean", "conf95")}


def _summary(overall: pd.DataFrame, by_problem: pd.DataFrame) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for _, row in _ordered(overall, RUN_KEYS).iterrows():
        out[f"{row['prompting']}/{row['modelname']}"] = {"ALL": _stat(row)}
    for _, row in _ordered(by_problem, [*RUN_KEYS, "problemname"]).iterrows():
        run = out.setdefault(f"{row['prompting']}/{row['modelname']}", {})
        run[row["problemname"]] = _stat(row)
    return out


def to_json(analysis: WorldSenseAnalysis) -> dict[str, Any]:
    """``{"accuracy"|"bias": {"<prompting>/<model>": {"ALL"|problem: {mean, conf95}}}}``."""
    return {
        "accuracy": _summary(analysis.accuracy_overall, analysis.accuracy_by_problem),
        "bias": _summary(analysis.bias_overall, analysis.bias_by_problem),
    }


def analyse_testset_dir(testset_dir: str | Path, warn: Warn = warn_stderr) -> WorldSenseAnalysis:
    """Load ``trials.jsonl.bz2`` and every results file of a test-set folder, then analyse."""
    trials = load_testset(testset_dir)
    results = load_results(testset_dir)
    if results.empty:
        raise DataError(f"{Path(testset_dir) / 'results'}: no '*{RESULTS_SUFFIX}' file with "
                        "responses; run a model on this test set first")
    return analyse(trials, results, warn=warn)


# -- the HTML report's hooks (WorldSenseBenchmark delegates here) ------------------------------
TESTSET = "test_set"
#: The paper's metrics, as the report defines them where they first appear.
DEFINITIONS = {
    "accuracy": "Share of right answers, averaged so that every cell (problem × tuple of "
    "trials with balanced answers) counts equally, as the paper does: accuracy = mean over "
    "cells of (right answers in the cell / trials in the cell); 95% CI = mean ± 1.96 × SEM "
    "over the cells.",
    "bias": "How the answers lean: bias = the weighted mean over a tuple's trials of b, where "
    "b = +1 for " + ", ".join(k for k, v in _BIAS.items() if v > 0) + " and −1 for "
    + ", ".join(k for k, v in _BIAS.items() if v < 0) + " (0 for an invalid reply), averaged "
    "over tuples, in [−1, 1]; > 0 leans to TRUE/POSSIBLE/decidable, 0 is no lean.",
    "chance": "A uniform random answer scores 50% on every problem under this accuracy, "
    "because each tuple balances its right answers; the `random` model's run measures it.",
}


def testset_folders(data_dirs: Sequence[Path]) -> list[Path]:
    """Test-set folders (trials file plus a results/ folder) in or just above these folders."""
    seen: dict[Path, None] = {}
    for d in data_dirs:
        for cand in (d, d / TESTSET, d.parent, d.parent / TESTSET):
            if (cand / "trials.jsonl.bz2").is_file() and (cand / "results").is_dir():
                seen.setdefault(cand.resolve(), None)
    return list(seen)


_ANALYSES: dict[Path, WorldSenseAnalysis] = {}


def _analysis(folder: Path, warn: Warn) -> WorldSenseAnalysis:
    """The test set's analysis, once per process (the profile and the tables both need it)."""
    if folder not in _ANALYSES:
        _ANALYSES[folder] = analyse_testset_dir(folder, warn=warn)
    return _ANALYSES[folder]


def upstream_citation(folder: Path, name: str = "") -> str:
    """`owner/repo@commit:path` of a test set's folder (or a file in its results/), never the
    path of this machine."""
    from mindprobe.benchmarks.worldsense.sets import COMMIT, REPO, UPSTREAM_DATA

    where = folder.name if folder.name == TESTSET else f"other_tests/{folder.name}"
    return f"{REPO}@{COMMIT}:{UPSTREAM_DATA}{where}" + (f"/results/{name}" if name else "")


def published_rows(data_dirs: Sequence[Path], warn: Warn) -> list[Any]:
    """One row per upstream results file of a test set (the paper's models): accuracy over
    all problems, computed by the same analysis as a run's (`runs.results_of_run`'s interval)
    from upstream's released responses."""
    from mindprobe.benchmarks.worldsense.sets import TRIALS_PATH, sha256_of
    from mindprobe.core.data import data_dir_for
    from mindprobe.core.published import PublishedRow

    out = []
    for folder in testset_folders([data_dir_for("worldsense", d) for d in data_dirs]):
        doc = to_json(_analysis(folder, warn))
        n_trials = load_results(folder).groupby(["prompting", "modelname"]).size()
        for run, problems in doc["accuracy"].items():
            prompting, _, model = run.partition("/")
            s = problems.get("ALL") or {}
            if s.get("mean") is None:
                continue
            n = int(n_trials.get((prompting, model), 0))
            lo, hi, method = accuracy_interval(s["mean"], s.get("conf95"),
                                               round(s["mean"] * n), n)
            sha = sha256_of(TRIALS_PATH.get(folder.name, ""))
            out.append(PublishedRow(
                "worldsense", model, "accuracy", repr(s["mean"]), {"prompting": prompting},
                folder.name, f"trials sha256 {sha[:12]}" if sha else "upstream's",
                DEFINITIONS["accuracy"],
                upstream_citation(folder, f"{prompting}___{model}{RESULTS_SUFFIX}"),
                unit="fraction", percent=True, n=n, ci=(lo, hi), headline=True,
                data_label=f"upstream's {folder.name}", computed=True,
                extra={"ci_method": method, "paper": "Benchekroun et al. 2023, arXiv "
                       "2311.15930"}))
    return out


def published_tables(data_dirs: Sequence[Path], warn: Warn) -> dict[str, Any]:
    """The paper's full tables (overall, accuracy and bias by problem) of every test-set folder
    found, as Results, exactly as `mindprobe analyse worldsense -t DIR` prints them."""
    from mindprobe.core.results import Results

    out = {}
    for folder in testset_folders(data_dirs):
        analysis = _analysis(folder, warn)
        doc = to_json(analysis)
        res = Results("worldsense", detail=doc)
        rows = []
        for run, problems in doc["accuracy"].items():
            prompting, _, model = run.partition("/")
            s = problems.get("ALL", {})
            rows.append({"model": model, "prompting": prompting,
                         "accuracy": None if s.get("mean") is None else 100 * s["mean"],
                         "acc ±95": None if s.get("conf95") is None else 100 * s["conf95"]})
        res.add_table("overall", pd.DataFrame(rows), TITLE_OVERALL.strip() + " (%)", index=False)
        for name, table, title in (("accuracy", analysis.accuracy_by_problem, TITLE_ACCURACY),
                                   ("bias", analysis.bias_by_problem, TITLE_BIAS)):
            res.add_table(name, pivot_pretty(table, list(RUN_KEYS), "problemname"), title.strip())
        res.notes.append(f"{analysis.n_trials:,} trials of {upstream_citation(folder)}; cells: value (95% CI "
                         "half-width); published results of the paper's models")
        out[f"WorldSense test set: {folder.name} (upstream results files, published)"] = res
    return out


# -- plots (the report) ----------------------------------------------------------------------------
def plots(runs: Sequence[Run], results: Sequence[Results | None]) -> list[str]:
    """Accuracy and bias by problem with 95% CIs (from each run's `accuracy/<run>` table);
    per-problem chance from the same table's `chance` column (the benchmark's own definition,
    the line the terminal and JSON show)."""
    out = []
    for setting, pairs in by_setting(runs, results).items():
        cats: list[str] = []
        rows: list[tuple[Run, dict[str, dict[str, Any]]]] = []
        chance: dict[str, list[float]] = {}
        for run, res in pairs:
            t = next((t for n, t in res.tables.items() if n.startswith("accuracy/")), None)
            if t is None:
                continue
            frame = frame_of(t)
            by = {str(r["problem"]): r for r in frame.to_dict("records")}
            cats += [c for c in by if c not in cats]
            rows.append((run, by))
            ref = next((t for n, t in res.tables.items() if n == "chance"), None)
            for row in (frame_of(ref).to_dict("records") if ref is not None else []):
                if num(row.get("chance")) is not None:
                    chance.setdefault(str(row["problem"]), []).append(float(row["chance"]))
        if not rows:
            continue
        per_problem = {p: exact_mean(v) for p, v in chance.items()}
        acc, bias = [], []
        for run, by in rows:
            m = run.model_label
            a = [num(by.get(c, {}).get("accuracy")) for c in cats]
            acc.append(Series(m, a, [num(by.get(c, {}).get("ci_low")) for c in cats],
                              [num(by.get(c, {}).get("ci_high")) for c in cats], color(m)))
            b = [num(by.get(c, {}).get("bias")) for c in cats]
            bh = [num(by.get(c, {}).get("bias ±95")) for c in cats]
            bias.append(Series(m, b, minus(b, bh), plus(b, bh), color(m)))
        refs = [100 * per_problem[c] if c in per_problem else None for c in cats]
        out.append(bar_chart(cats, acc, title=f"WorldSense {setting}: accuracy by problem (95% CI)",
                             y_label="accuracy %", y_range=(0, 100), category_refs=refs,
                             category_ref_label="chance (uniform guess, paper's scoring)"))
        out.append(bar_chart(cats, bias, title=f"WorldSense {setting}: bias by problem (95% CI; "
                             "> 0 leans to TRUE/POSSIBLE/decidable)", y_label="bias",
                             y_range=(-1, 1)))
    return out
