"""Metrics (spec §4.4) on a hand-made frame: macro vs micro, Wilson CIs, bias, breakdowns."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from mindprobe.benchmarks.sort.metrics import (
    accuracy_table,
    analyse,
    context_comparison,
    label_bias,
    macro_accuracy,
    overall,
    wilson_interval,
)
from mindprobe.errors import DataError


def _records() -> pd.DataFrame:
    rows = []
    # condition 250/20: 4 rows, 3 correct; condition 1000/50: 2 rows, 0 correct
    for i, (ans, truth) in enumerate([("A", "A"), ("A", "A"), ("B", "B"), ("A", "B")]):
        rows.append({"excerpt_length": 250, "segment_length": 20, "book_idx": 1 + i % 2,
                     "distance_bin": [62, 83, 125, 200][i], "present_seg1_first": i % 2,
                     "answer": ans, "ground_truth": truth, "correct": ans == truth})
    for ans, truth in (("A", "B"), ("X", "A")):
        rows.append({"excerpt_length": 1000, "segment_length": 50, "book_idx": 1,
                     "distance_bin": 250, "present_seg1_first": 0, "answer": ans,
                     "ground_truth": truth, "correct": False})
    return pd.DataFrame(rows)


def test_wilson_interval_known_values():
    low, high = wilson_interval(8, 10)
    assert float(low) == pytest.approx(0.4902, abs=1e-4)
    assert float(high) == pytest.approx(0.9433, abs=1e-4)
    low0, high0 = wilson_interval(0, 0)
    assert math.isnan(float(low0)) and math.isnan(float(high0))


def test_macro_is_the_mean_of_condition_means():
    df = _records()
    assert macro_accuracy(df)["macro_accuracy"].iloc[0] == pytest.approx((0.75 + 0.0) / 2)
    summary = overall(df)
    assert summary["accuracy"].iloc[0] == pytest.approx(3 / 6)  # micro
    assert summary["macro_accuracy"].iloc[0] == pytest.approx(0.375)
    assert summary["chance"].iloc[0] == 0.5 and summary["ci_method"].iloc[0] == "wilson"
    assert summary["ci_low"].iloc[0] < 0.5 < summary["ci_high"].iloc[0]


def test_label_bias_names_upstreams_percentage_honestly():
    bias = label_bias(_records())
    assert bias["share_A"].iloc[0] == pytest.approx(4 / 6)
    assert bias["share_X"].iloc[0] == pytest.approx(1 / 6)
    assert bias["most_frequent_answer"].iloc[0] == "A"
    assert bias["most_frequent_answer_share"].iloc[0] == pytest.approx(4 / 6)


def test_breakdowns_and_bin_index():
    result = analyse(_records())
    by_bin = result.breakdowns["bin_index"]
    assert by_bin["bin_index"].tolist() == [0, 1, 2, 3]
    assert by_bin["n"].tolist() == [3, 1, 1, 1]
    dist = result.breakdowns["distance_bin"]
    assert set(dist.columns) >= {"excerpt_length", "bin_index", "distance_bin", "n", "accuracy",
                                 "ci_low", "ci_high"}
    books = result.breakdowns["book"].set_index("book_idx")
    assert books.loc[1, "n"] == 4 and books.loc[2, "accuracy"] == pytest.approx(0.5)
    cond = result.by_condition.set_index(["excerpt_length", "segment_length"])
    assert cond.loc[(250, 20), "accuracy"] == 0.75
    assert result.context_comparison is None


def test_context_side_by_side():
    a = _records().assign(context="in-context")
    b = _records().assign(context="no-context", correct=False)
    table = context_comparison(pd.concat([a, b]))
    assert table is not None and len(table) == 2
    row = table.set_index(["excerpt_length", "segment_length"]).loc[(250, 20)]
    assert (row["accuracy_in_context"], row["accuracy_no_context"]) == (0.75, 0.0)
    assert row["difference"] == 0.75
    per_run = accuracy_table(pd.concat([a, b]))
    assert per_run["context"].tolist() == ["in-context", "no-context"]


def test_list_of_dicts_and_missing_fields():
    assert overall(_records().to_dict("records"))["n"].iloc[0] == 6
    with pytest.raises(DataError, match="correct"):
        overall([{"excerpt_length": 250, "segment_length": 20, "answer": "A"}])
