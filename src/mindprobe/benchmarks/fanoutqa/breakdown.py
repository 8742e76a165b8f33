"""Per-question breakdowns of FanOutQA scores: by category and by fan-out width.

The paper's headline is one number per setting; these tables show *where* a model fails (which
topics, how many evidence pages), with 95% intervals so that small groups are not over-read.
Binary metrics (strict accuracy, judge) get Wilson score intervals; continuous ones (loose
accuracy, ROUGE F, BLEURT) a seeded percentile bootstrap of the mean. ``ci_method`` says which.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from mindprobe.core.stats import N_BOOT, bootstrap_mean, exact_mean, exact_sum, wilson_interval

BINARY = ("strict", "gpt")
CONTINUOUS = ("acc", "rouge1_f", "rouge2_f", "rougeL_f", "bleurt")
DEFAULT_METRICS = ("acc", "strict", "rouge1_f", "rouge2_f", "rougeL_f", "bleurt", "gpt")
# Fan-out width bins over the dev set's 5-46 evidence pages (163 questions have 6).
FANOUT_BINS: tuple[tuple[int, int | None], ...] = (
    (5, 5),
    (6, 6),
    (7, 7),
    (8, 9),
    (10, 13),
    (14, None),
)
WILSON = "wilson95"


def bootstrap_interval(
    values: Sequence[float], n_boot: int = N_BOOT, seed: int = 0
) -> tuple[float, float]:
    """95% percentile bootstrap of the mean; NaN for fewer than two values."""
    if len(values) < 2:
        return math.nan, math.nan
    return bootstrap_mean(values, n_boot, seed)


def interval(values: Sequence[float], binary: bool, seed: int = 0) -> tuple[float, float, str]:
    """(low, high, method) of a 95% interval: Wilson for shares, a seeded percentile bootstrap
    for means of scores in [0, 1]. When every score is the same (all 0, say) the bootstrap has
    no spread and would claim a zero-width interval; Wilson on the score sum, labelled so,
    stands in for it."""
    x = np.asarray(values, dtype=float)
    if x.size < 2 and not binary:
        return math.nan, math.nan, ""  # one score: no interval to give
    if binary or (x.size > 1 and x.min() == x.max() and 0 <= x.min() <= 1):
        lo, hi = wilson_interval(exact_sum(x), int(x.size))
        return float(lo), float(hi), WILSON if binary else WILSON + " (no spread to bootstrap)"
    lo, hi = bootstrap_interval(x, seed=seed)
    return lo, hi, f"bootstrap95(percentile,{N_BOOT},seed={seed})"


def records_frame(records: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Flatten ``Evaluation.records`` into one row per scored answer (ROUGE as F-scores)."""
    rows = []
    for r in records:
        rouge = r.get("rouge") or {}
        rows.append(
            {
                "question_id": r["question_id"],
                "answered": r.get("answered", True),
                "acc": float(r["acc"]),
                "strict": float(bool(r["strict"])),
                **{
                    f"{t}_f": rouge.get(t, {}).get("fscore", math.nan)
                    for t in ("rouge1", "rouge2", "rougeL")
                },
                "bleurt": math.nan if r.get("bleurt") is None else float(r["bleurt"]),
                "gpt": math.nan if r.get("gpt") is None else float(r["gpt"]),
                "categories": list(r.get("categories") or []),
                "n_evidence": int(r.get("n_evidence", 0)),
            }
        )
    return pd.DataFrame(rows)


def fanout_label(n: int, bins: Sequence[tuple[int, int | None]] = FANOUT_BINS) -> str:
    for lo, hi in bins:
        if n >= lo and (hi is None or n <= hi):
            return str(lo) if hi == lo else (f"{lo}+" if hi is None else f"{lo}-{hi}")
    return f"<{bins[0][0]}" if bins and n < bins[0][0] else str(n)


def _summarise(
    frame: pd.DataFrame, group_col: str, metrics: Sequence[str], seed: int
) -> pd.DataFrame:
    out = []
    for group, sub in frame.groupby(group_col, sort=False):
        for m in metrics:
            vals = sub[m].dropna().to_numpy(dtype=float)
            if vals.size == 0:
                continue
            lo, hi, method = interval(vals, m in BINARY, seed)
            out.append(
                {
                    group_col: group,
                    "metric": m,
                    "n": int(vals.size),
                    "mean": exact_mean(vals),
                    "ci_low": lo,
                    "ci_high": hi,
                    "ci_method": method,
                }
            )
    cols = [group_col, "metric", "n", "mean", "ci_low", "ci_high", "ci_method"]
    return pd.DataFrame(out, columns=cols)


def by_category(
    records: Iterable[Mapping[str, Any]], metrics: Sequence[str] = DEFAULT_METRICS, seed: int = 0
) -> pd.DataFrame:
    """One row per (category, metric). A question with several categories counts in each,
    so groups overlap and their n do not sum to N. Sorted by n descending, then name."""
    frame = records_frame(records).explode("categories").rename(columns={"categories": "category"})
    frame = frame.dropna(subset=["category"])
    table = _summarise(frame, "category", [m for m in metrics if m in frame], seed)
    if table.empty:
        return table
    size = table.groupby("category")["n"].transform("max")
    return (
        table.assign(_n=size)
        .sort_values(["_n", "category"], ascending=[False, True], kind="stable")
        .drop(columns="_n")
        .reset_index(drop=True)
    )


def by_fanout(
    records: Iterable[Mapping[str, Any]],
    metrics: Sequence[str] = DEFAULT_METRICS,
    bins: Sequence[tuple[int, int | None]] | None = FANOUT_BINS,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per (fan-out width group, metric); width = number of evidence pages (duplicates
    counted). ``bins=None`` groups by the exact count."""
    frame = records_frame(records)
    if frame.empty:
        return _summarise(frame.assign(fanout=[]), "fanout", [], seed)
    frame["_order"] = frame["n_evidence"]
    frame["fanout"] = [
        str(n) if bins is None else fanout_label(n, bins) for n in frame["n_evidence"]
    ]
    frame = frame.sort_values("_order", kind="stable")
    table = _summarise(frame, "fanout", [m for m in metrics if m in frame], seed)
    return table.reset_index(drop=True)
