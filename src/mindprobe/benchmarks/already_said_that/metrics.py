"""Aggregate metrics of "Already Said That" over per-sample records (spec §10)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

# The registry's order: turn statistics first, then rates, then distractor statistics.
METRIC_NAMES: tuple[str, ...] = (
    "avg_num_turns",
    "stddev_num_turns",
    "median_num_turns",
    "max_num_turns",
    "min_num_turns",
    "false_positive_rate",
    "false_negative_rate",
    "avg_distractor_accuracy",
    "violation_rate",
    "avg_num_distractors",
    "stddev_num_distractors",
    "median_num_distractors",
    "max_num_distractors",
    "min_num_distractors",
)


def _five_stats(values: np.ndarray) -> tuple[float, float, float, float, float]:
    """Mean, population std (ddof=0), numpy median, max, min."""
    return (
        float(np.mean(values)),
        float(np.std(values)),
        float(np.median(values)),
        float(np.max(values)),
        float(np.min(values)),
    )


def _rate(records: Sequence[Mapping[str, Any]], key: str) -> float:
    return sum(bool(r[key]) for r in records) / len(records)


def aggregate(records: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """The 14 metrics in registry order, all floats; NaN where no sample saw a distractor.

    A record's `distractor_accuracy` may be None or NaN (no distractor shown); such samples
    are left out of the accuracy mean only.
    """
    if not records:
        raise ValueError("cannot aggregate an empty run: no sample records were given")
    # Sorted, so the metrics depend on the records alone, not on the order they finished in
    # (which concurrency changes): float sums are order-sensitive in their last digit.
    turns = _five_stats(np.sort(np.array([r["num_turns"] for r in records], dtype=float)))
    distractors = _five_stats(np.sort(np.array([r["num_distractors"] for r in records],
                                               dtype=float)))
    accuracies = sorted(
        float(a)
        for a in (r["distractor_accuracy"] for r in records)
        if a is not None and not math.isnan(a)
    )
    accuracy = float(np.mean(accuracies)) if accuracies else float("nan")
    values = (
        *turns,
        _rate(records, "was_false_pos"),
        _rate(records, "was_false_neg"),
        accuracy,
        _rate(records, "violation_occurred"),
        *distractors,
    )
    return dict(zip(METRIC_NAMES, values, strict=True))
