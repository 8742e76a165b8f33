"""Per-question breakdowns: by category and by fan-out width, with labelled intervals."""

from __future__ import annotations

import math

import pytest

from mindprobe.benchmarks.fanoutqa.breakdown import (
    bootstrap_interval,
    by_category,
    by_fanout,
    fanout_label,
    wilson_interval,
)

COLUMNS = ["metric", "n", "mean", "ci_low", "ci_high", "ci_method"]


def _rec(i, acc, strict, cats, width, gpt=None):
    rouge = {
        t: {"precision": acc, "recall": acc, "fscore": acc} for t in ("rouge1", "rouge2", "rougeL")
    }
    return {
        "question_id": f"q{i}",
        "answered": True,
        "acc": acc,
        "strict": strict,
        "rouge": rouge,
        "bleurt": None,
        "gpt": gpt,
        "categories": cats,
        "n_evidence": width,
    }


RECORDS = [
    _rec(0, 1.0, True, ["History", "Sports"], 5, 1),
    _rec(1, 0.5, False, ["History"], 6, 0),
    _rec(2, 0.0, False, ["Geography"], 9, 0),
    _rec(3, 0.75, False, ["History"], 46, 1),
]


def test_wilson_and_bootstrap():
    lo, hi = wilson_interval(5, 10)
    assert (round(lo, 4), round(hi, 4)) == (0.2366, 0.7634)
    assert wilson_interval(0, 4)[0] == 0.0 and wilson_interval(4, 4)[1] == 1.0
    assert all(math.isnan(x) for x in wilson_interval(0, 0))
    assert bootstrap_interval([1.0, 1.0, 1.0]) == (1.0, 1.0)
    assert all(math.isnan(x) for x in bootstrap_interval([0.3]))
    assert bootstrap_interval([0, 1, 0.5, 0.2]) == bootstrap_interval([0, 1, 0.5, 0.2])


def test_by_category():
    t = by_category(RECORDS)
    assert list(t.columns) == ["category", *COLUMNS]
    hist = t[(t.category == "History") & (t.metric == "acc")].iloc[0]
    assert (
        hist.n == 3
        and hist["mean"] == pytest.approx(0.75)
        and hist.ci_method.startswith("bootstrap")
    )
    strict = t[(t.category == "History") & (t.metric == "strict")].iloc[0]
    assert strict.ci_method == "wilson95" and strict["mean"] == pytest.approx(1 / 3)
    assert t.category.iloc[0] == "History"  # largest group first
    assert "bleurt" not in set(t.metric)  # metrics never computed are left out


def test_by_fanout():
    t = by_fanout(RECORDS, metrics=("acc", "gpt"))
    assert list(t.columns) == ["fanout", *COLUMNS]
    assert list(dict.fromkeys(t.fanout)) == ["5", "6", "8-9", "14+"]
    g = t[(t.fanout == "14+") & (t.metric == "gpt")].iloc[0]
    assert g.n == 1 and g["mean"] == 1.0 and g.ci_method == "wilson95"
    exact = by_fanout(RECORDS, metrics=("acc",), bins=None)
    assert list(exact.fanout) == ["5", "6", "9", "46"]
    assert fanout_label(7) == "7" and fanout_label(12) == "10-13" and fanout_label(3) == "<5"


def test_interval_without_spread_is_wilson_labelled_so():
    from mindprobe.benchmarks.fanoutqa.breakdown import interval

    lo, hi, method = interval([0.0] * 20, binary=False)
    assert lo == 0.0 and hi > 0.1 and method == "wilson95 (no spread to bootstrap)"
    lo, hi, method = interval([0.0, 1.0, 0.5, 0.25], binary=False)
    assert method.startswith("bootstrap95") and lo < hi
    assert interval([1.0, 0.0], binary=True)[2] == "wilson95"
    assert interval([0.5], binary=False)[2] == ""  # one score: no interval, and not labelled one
