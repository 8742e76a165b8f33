"""MR-Score's 95% interval (the half-width a plan states for it: chance.py).

MR-Score = 0.2·max(0, MCC) + 0.3·Acc_step + 0.5·Acc_reason is a function of counts of six
kinds of solution (right/wrong label × what the reply got right), so the interval is core's
stratified bootstrap over solutions, stratified as the sample is (question type × label): each
resample's counts give its MR-Score, with the clipping at MCC 0 where the headline has it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mindprobe.core.stats import (
    N_BOOT,
    Interval,
    stratified_bootstrap,
)

from .metrics import W_MCC, W_REASON, W_STEP

#: What a solution came to: a `correct` one judged right (TP) or not (FN); a `wrong` one
#: judged right (FP... as upstream counts: a `wrong` solution judged `correct`), judged wrong
#: without its first error step, with it, or with it and its reason.
TP, FN, FP, TN, STEP, REASON = range(6)
METHOD = (f"stratified percentile bootstrap 95% ({N_BOOT} resamples of the solutions, "
          "within question type × label)")


def kind_of(row: Mapping[str, Any], verdicts: Mapping[str, bool] | None) -> int:
    """The row's kind (the counts MR-Score is made of: T1, T2 and T3 hits)."""
    if row["label"] == "correct":
        return TP if row["t1_hit"] else FN
    if not row["t1_hit"]:
        return FP
    if not row["t2_hit"]:
        return TN
    return REASON if verdicts and verdicts.get(row["uuid"]) else STEP


def mr_scores(counts: np.ndarray) -> np.ndarray:
    """MR-Score of each row of kind counts (…, 6), as `metrics.metrics_from_counts` computes
    it, vectorised (MCC 0 where its denominator is)."""
    tp, fn, fp = counts[..., TP], counts[..., FN], counts[..., FP]
    tn = counts[..., TN] + counts[..., STEP] + counts[..., REASON]
    wrong = np.maximum(fp + tn, 1)
    den = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    with np.errstate(invalid="ignore", divide="ignore"):
        mcc = np.where(den > 0, (tp * tn - fp * fn) / np.where(den > 0, den, 1), 0.0)
    return (W_MCC * np.maximum(mcc, 0.0) + W_STEP * (counts[..., STEP] + counts[..., REASON])
            / wrong + W_REASON * counts[..., REASON] / wrong)


def _strata(rows: Sequence[Mapping[str, Any]], verdicts: Mapping[str, bool] | None
            ) -> list[list[int]]:
    groups: dict[tuple[str, str], list[int]] = {}
    for r in rows:
        groups.setdefault((str(r["question_type"]), str(r["label"])), []).append(
            kind_of(r, verdicts))
    return [groups[k] for k in sorted(groups)]


def _counts(draws: list[np.ndarray]) -> np.ndarray:
    return sum(np.stack([(d == k).sum(axis=1) for k in range(6)], axis=-1) for d in draws)


def mr_score_interval(rows: Sequence[Mapping[str, Any]],
                      verdicts: Mapping[str, bool] | None) -> Interval:
    """The headline's interval (reasons without a verdict count as misses, as the lower bound
    does)."""
    strata = _strata(rows, verdicts)
    if sum(len(s) for s in strata) < 2:
        return Interval(None, None, "none (fewer than two solutions)")
    lo, hi = stratified_bootstrap(strata, statistic=lambda d: mr_scores(_counts(d)))
    return Interval(lo, hi, METHOD)
