"""Issue 22, observation 2: Already Said That's interval stays within [0, max turns], names its
method, and agrees with the paired comparison's resampling; the headline row is marked and the
metrics have a legend."""

from __future__ import annotations

import numpy as np

from mindprobe.benchmarks.already_said_that.report import results_of_records
from mindprobe.core.stats import mean_interval, paired_difference


def _rec(turns: int) -> dict:
    return {"id": str(turns), "num_turns": turns, "num_distractors": 0, "distractor_accuracy": None,
            "was_false_pos": turns < 10, "was_false_neg": False, "violation_occurred": False}


def test_turns_interval_respects_the_cap_and_names_its_method():
    records = [_rec(t) for t in (1, 1, 2, 10, 10, 10, 0, 0)]  # skewed, capped at 10 turns
    res = results_of_records(records, "all", max_turns=10)
    head = res.headline
    assert 0.0 <= head.ci_low <= head.value <= head.ci_high <= 10.0, head
    assert "bootstrap" in head.ci_method
    two = results_of_records([_rec(1), _rec(12)], "all", max_turns=12)
    assert two.headline.ci_low >= 0.0 and two.headline.ci_high <= 12.0  # t would give [−64, 77]
    rows = res.to_json()["tables"]["metrics"]
    assert rows[0]["metric"] == "avg_num_turns *" and rows[0]["95% interval"].startswith("[")
    assert any(n.startswith("* headline. Legend:") and "violation_rate" in n for n in res.notes)
    assert head.chance == 1 - 2 ** -10  # computed from the scoring, not assumed


def test_single_run_and_paired_intervals_come_from_the_same_resampling():
    a = np.array([1, 1, 2, 10, 10, 10, 0, 0], dtype=float)
    zero = np.zeros_like(a)
    single = mean_interval(a, bounds=(0, 10))
    paired = paired_difference(a, zero)  # a run against an all-zero one: the same interval
    assert abs(single.low - paired.low) < 0.6 and abs(single.high - paired.high) < 0.6
    assert paired.method.startswith("paired bootstrap") and "n = 8" in paired.text()
