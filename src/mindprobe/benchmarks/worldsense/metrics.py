"""WorldSense scoring (spec §3.2–§3.5): trials → tuples → equally re-weighted cell statistics.

Everything is vectorised over integer group codes; the per-tuple reduction is a handful of
``np.bincount`` calls so that scoring 4 × 87k responses stays well under a second.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from mindprobe.benchmarks.worldsense.answers import _BIAS, _CLASS, _WEIGHT
from mindprobe.benchmarks.worldsense.run_scores import INCOMPLETE_WARNING
from mindprobe.core.stats import cell_moments, regroup_equal, with_sem
from mindprobe.errors import DataError

Warn = Callable[[str], None]

RUN_KEYS = ("prompting", "modelname")
# Fields constant within a tuple that the per-tuple table keeps when present.
TUPLE_FIELDS = ("problemname", "problemsize", "skin", "qskin", "complexity", "EXPNAME",
                "domain", "intraining")
JOIN_FIELDS = ("Key", "tuple_ID", "goldresp", "expectedresp", *TUPLE_FIELDS)
_REQUIRED = ("prompting", "modelname", "tuple_ID", "goldresp", "resp", "problemname",
             "problemsize")

PARTIAL_WARNING = "    *** !!! [WARNING] PARTIAL RESULTS FILE: number of rows {r} differs from {n}"


def warn_stderr(message: str) -> None:
    """Default warning sink: keep stdout for the tables."""
    print(message, file=sys.stderr)


def _as_category(column: pd.Series) -> pd.Categorical:
    """Categorical in order of appearance (no sorting of the categories, unlike astype)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.array
    codes, uniques = pd.factorize(column, use_na_sentinel=False)
    return pd.Categorical.from_codes(codes, pd.Index(uniques))


def _lookup(codes: np.ndarray, uniques: Sequence[object], table: dict[str, float],
            default: float) -> np.ndarray:
    """Map factorized strings through ``table`` via their few distinct values."""
    mapped = np.array([table.get(u, default) if isinstance(u, str) else default
                       for u in uniques], dtype=float)
    return mapped[codes]


def _group_codes(df: pd.DataFrame, keys: Sequence[str]) -> tuple[np.ndarray, int]:
    """Dense codes 0..k-1 of the key combination, re-densified per key so nothing overflows."""
    combined, n_combined = np.zeros(len(df), dtype=np.int64), 1
    for key in keys:
        codes, uniques = pd.factorize(df[key], use_na_sentinel=False)
        combined, seen = pd.factorize(combined * max(len(uniques), 1) + codes)
        n_combined = len(seen)
    return combined, n_combined


def join_results(trials: pd.DataFrame, results: pd.DataFrame,
                 columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Inner join of results on trial ``Key`` (results order; unknown keys are dropped)."""
    keys = pd.Index(trials["Key"])
    if not keys.is_unique:
        raise DataError("the trial set has duplicated Keys; re-fetch the test set")
    pos = keys.get_indexer(results["Key"])
    hit = pos >= 0
    cols = list(trials.columns) if columns is None else [c for c in columns if c in trials]
    joined = trials[cols].take(pos[hit]).reset_index(drop=True)
    for name in ("resp", *RUN_KEYS):
        joined[name] = results[name].array[hit]
    return joined


def compute_acc_table(df: pd.DataFrame, warn: Warn = warn_stderr) -> pd.DataFrame:
    """Reduce joined trials to one row per (prompting, modelname, tuple_ID) with acc and bias.

    Tuples whose row count differs from len(expectedresp) are dropped (spec §3.2); a column
    ``n_expected`` (= len(expectedresp)), when present, saves measuring the lists.
    """
    missing = [c for c in _REQUIRED if c not in df]
    if "n_expected" not in df and "expectedresp" not in df:
        missing.append("expectedresp")
    if missing:
        raise ValueError(f"compute_acc_table needs columns {missing}")
    gold_codes, gold_values = pd.factorize(df["goldresp"], use_na_sentinel=False)
    gold_class = _lookup(gold_codes, gold_values, _CLASS, np.nan)
    if np.isnan(gold_class).any():
        bad = df["goldresp"].iloc[int(np.argmax(np.isnan(gold_class)))]
        raise DataError(f"unknown gold answer {bad!r}; the trial set is not a WorldSense set")
    weight = _lookup(gold_codes, gold_values, _WEIGHT, np.nan)
    resp_codes, resp_values = pd.factorize(df["resp"], use_na_sentinel=False)
    correct = (_lookup(resp_codes, resp_values, _CLASS, -1.0) == gold_class).astype(float)
    bias = _lookup(resp_codes, resp_values, _BIAS, 0.0)

    group, n_groups = _group_codes(df, ("prompting", "modelname", "tuple_ID"))
    n_rows = np.bincount(group, minlength=n_groups)
    w_sum = np.bincount(group, weights=weight, minlength=n_groups)
    acc = np.bincount(group, weights=weight * correct, minlength=n_groups) / w_sum
    bias_t = np.bincount(group, weights=weight * bias, minlength=n_groups) / w_sum

    _, first = np.unique(group, return_index=True)
    if "n_expected" in df:
        n_expected = df["n_expected"].to_numpy()[first]
    else:
        n_expected = np.fromiter(map(len, df["expectedresp"].to_numpy()[first]),
                                 dtype=np.int64, count=n_groups)
    keep = n_rows == n_expected
    if not keep.all():
        warn(INCOMPLETE_WARNING)
    fields = ["prompting", "modelname", "tuple_ID", *(f for f in TUPLE_FIELDS if f in df)]
    table = df[fields].take(first[keep]).reset_index(drop=True)
    table["acc"] = acc[keep]
    table["bias"] = bias_t[keep]
    return table


def stat_by_group(acc_table: pd.DataFrame, column: str,
                  groupby: Sequence[str] = RUN_KEYS, reweight: bool = True) -> pd.DataFrame:
    """Mean/SEM of a per-tuple ``column`` per group, equally re-weighting sizes then problems.

    Without re-weighting (or when ``groupby`` already holds problemname and problemsize) this is
    a plain mean and SEM over tuples. Columns: groupby…, n, mean, var, q, sem, conf95.
    """
    keys = list(groupby)
    if not keys:
        raise ValueError("groupby needs at least one field, e.g. ['prompting', 'modelname']")
    if not reweight:
        cells = cell_moments(acc_table, keys, column)
    else:
        leaf = keys + [f for f in ("problemname", "problemsize") if f not in keys]
        cells = cell_moments(acc_table, leaf, column)
        if "problemsize" not in keys:
            cells = regroup_equal(cells, [k for k in leaf if k != "problemsize"])
        if "problemname" not in keys:
            cells = regroup_equal(cells, keys)
    table = with_sem(cells)
    table.attrs["measure"] = column
    return table


def accuracy_by_group(acc_table: pd.DataFrame, groupby: Sequence[str] = RUN_KEYS,
                      reweight: bool = True) -> pd.DataFrame:
    """Accuracy (fraction) per group with SEM and 95% CI half-width (spec §3.5)."""
    return stat_by_group(acc_table, "acc", groupby, reweight)


def bias_by_group(acc_table: pd.DataFrame, groupby: Sequence[str] = RUN_KEYS,
                  reweight: bool = True) -> pd.DataFrame:
    """Bias in [-1, 1] per group with SEM and 95% CI half-width (spec §3.5)."""
    return stat_by_group(acc_table, "bias", groupby, reweight)


@dataclass
class WorldSenseAnalysis:
    """All numbers behind the WorldSense report, at full precision (fractions, not percent)."""

    acc_table: pd.DataFrame
    accuracy_overall: pd.DataFrame
    accuracy_by_problem: pd.DataFrame
    bias_overall: pd.DataFrame
    bias_by_problem: pd.DataFrame
    n_trials: int
    warnings: list[str]


def _overall(by_problem: pd.DataFrame) -> pd.DataFrame:
    table = with_sem(regroup_equal(by_problem, list(RUN_KEYS)))
    table.attrs["measure"] = by_problem.attrs["measure"]
    return table


def _scoring_columns(trials: pd.DataFrame) -> pd.DataFrame:
    """The trial fields scoring needs; grouping keys become categoricals (cheap to group by)."""
    out = trials[[c for c in JOIN_FIELDS if c in trials and c != "expectedresp"]].copy()
    for name in ("tuple_ID", "goldresp", "problemname"):
        out[name] = _as_category(out[name])
    out["n_expected"] = np.fromiter(map(len, trials["expectedresp"].to_numpy()),
                                    dtype=np.int64, count=len(trials))
    return out


def analyse(trials_df: pd.DataFrame, results_df: pd.DataFrame,
            warn: Warn = warn_stderr) -> WorldSenseAnalysis:
    """Score results against trials: partial-file check, join, tuples, per-problem and overall."""
    warnings: list[str] = []

    def emit(message: str) -> None:
        warnings.append(message)
        warn(message)

    n_trials = len(trials_df)
    results = results_df[["Key", "resp", *RUN_KEYS]].copy()
    for name in ("resp", *RUN_KEYS):
        results[name] = _as_category(results[name])
    sizes = results.groupby(list(RUN_KEYS), sort=False, observed=True).size()
    for rows in sizes.to_numpy():
        if rows != n_trials:
            emit(PARTIAL_WARNING.format(r=rows, n=n_trials))
    acc_table = compute_acc_table(join_results(_scoring_columns(trials_df), results), emit)
    by_problem = [stat_by_group(acc_table, col, [*RUN_KEYS, "problemname"])
                  for col in ("acc", "bias")]
    return WorldSenseAnalysis(
        acc_table=acc_table,
        accuracy_overall=_overall(by_problem[0]),
        accuracy_by_problem=by_problem[0],
        bias_overall=_overall(by_problem[1]),
        bias_by_problem=by_problem[1],
        n_trials=n_trials,
        warnings=warnings,
    )

