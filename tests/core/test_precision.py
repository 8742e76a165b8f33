"""Stated half-widths from each benchmark's own interval method (issue 32, observation 4):
WorldSense's interval over tuples in equally weighted cells with the measured tuple variance,
the stratified bootstrap behind SORT's macro accuracy and MR-Score."""

from __future__ import annotations

import numpy as np
import pytest

from mindprobe.core.stats import (
    Z95,
    bootstrap_mean,
    proportion_interval,
    strata_interval,
    strata_precision,
    stratified_bootstrap,
)


def _trials(per_cell: dict[tuple[str, int], int]) -> list[dict]:
    out = []
    for (fam, size), n in per_cell.items():
        k = 3 if fam.startswith("Compl") else 2
        out += [{"problemname": fam, "problemsize": size, "tuple_ID": f"{fam}{size}-{t}",
                 "Key": f"{fam}{size}-{t}-{i}"} for t in range(n) for i in range(k)]
    return out


FAMILIES = ("Infer.trivial", "Infer.normal", "Consist.trivial", "Consist.normal",
            "Compl.trivial", "Compl.normal")


def test_worldsense_n_counts_every_cell_as_often_as_the_smallest():
    from mindprobe.benchmarks.worldsense.precision import (
        TUPLE_VARIANCE,
        effective_tuples,
        stated_precision,
    )

    equal = {(f, s): 10 for f in FAMILIES for s in (3, 4, 5)}
    assert effective_tuples((c for c, n in equal.items() for _ in range(n))) == 180
    lopsided = {**equal, ("Compl.normal", 4): 2}  # one small cell: every cell counts as 2
    assert effective_tuples((c for c, n in lopsided.items() for _ in range(n))) == 36
    p = stated_precision(_trials(equal))
    assert p.half_width == pytest.approx(100 * Z95 * (TUPLE_VARIANCE / 180) ** 0.5)
    assert 4.8 < p.half_width < 4.9 and "N = 180" in p.basis
    assert stated_precision(_trials(lopsided)).half_width > 10  # the issue's ±11.3 kind


def test_worldsense_n_in_closed_form_is_the_analysis_regrouping():
    """`effective_tuples` counts without pandas what `regroup_equal` (the analysis's own
    regrouping: sizes within a family, then families) gives for the same cells."""
    import random

    import pandas as pd

    from mindprobe.benchmarks.worldsense.precision import effective_tuples
    from mindprobe.core.stats import regroup_equal

    rng = random.Random(4)
    for _ in range(200):
        cells = {(f, s): rng.randint(1, 30) for f in rng.sample(FAMILIES, rng.randint(1, 6))
                 for s in rng.sample((3, 4, 5, 6), rng.randint(1, 4))}
        leaf = pd.DataFrame({"run": 0, "problemname": [c[0] for c in cells],
                             "problemsize": [c[1] for c in cells], "n": list(cells.values()),
                             "mean": 0.0, "var": 0.0, "q": 0.0})
        by_problem = regroup_equal(leaf, ["run", "problemname"])
        want = int(regroup_equal(by_problem, ["run"])["n"].iloc[0])
        assert effective_tuples(c for c, n in cells.items() for _ in range(n)) == want
    assert effective_tuples([]) == 0


def test_worldsense_quick_sample_fills_every_cell_alike():
    """420 trials of the quick profile: 10 tuples in each of the 18 cells, ±4.9 stated; the
    former sample (whole tuples in proportion to each family's trials) left Compl cells with a
    few tuples, which is where the issue's ±11.3 came from."""
    from mindprobe.benchmarks.worldsense.precision import effective_tuples
    from mindprobe.benchmarks.worldsense.task import WorldSenseBenchmark, sample_tuples, tuple_of
    from mindprobe.core.data import Grouped

    # the test set's shape: 1116 tuples a size for Infer.trivial and the Compl families,
    # 3348 for the others (spec §1), scaled down by 36
    shape = {(f, s): (31 if f in ("Infer.trivial", "Compl.trivial", "Compl.normal") else 93)
             for f in FAMILIES for s in (3, 4, 5)}
    g = Grouped.of(_trials(shape), tuple_of)
    limit = WorldSenseBenchmark().profile_settings("quick").limit
    chosen = sample_tuples(g, 1, limit)
    cells = {(t["problemname"], t["problemsize"], t["tuple_ID"]) for t in chosen}
    assert len(chosen) == limit == 420 and len(cells) == 180
    assert effective_tuples((f, s) for f, s, _ in cells) == 180
    # proportional to the trials (the former rule): the Compl cells get 5 tuples at best (and
    # fewer where a family's sizes come out unevenly): N 90 at most, ±6.9 against the ±4.9
    # the former plan promised for a share over 400 trials
    from mindprobe.benchmarks.worldsense.precision import TUPLE_VARIANCE

    total = sum(n * (3 if f.startswith("Compl") else 2) for (f, _), n in shape.items())
    prop = [(f, s) for (f, s), n in shape.items()
            for _ in range(round(400 * n / total))]
    assert effective_tuples(prop) == 90
    assert 100 * Z95 * (TUPLE_VARIANCE / 90) ** 0.5 > 1.25 * 98 / 400 ** 0.5


@pytest.mark.slow
def test_worldsense_tuple_variance_is_the_largest_measured(shared_data):
    """TUPLE_VARIANCE is what bench/worldsense_design_effect.py measures on the released
    results and a uniform guess (the guess is the largest)."""
    from mindprobe.benchmarks.worldsense.precision import TUPLE_VARIANCE, measured_variances

    v = measured_variances(shared_data("worldsense") / "test_set")
    assert set(v) >= {"GPT3.5", "GPT4", "Llama2-chat", "Llama2-FT+1M", "chance"}
    assert max(v.values()) == pytest.approx(TUPLE_VARIANCE, abs=5e-4)
    assert max(v, key=v.get) == "chance" and v["GPT4"] < v["GPT3.5"] < v["chance"]


def test_bootstrap_mean_is_the_one_stratum_case():
    x = [float(i % 7) for i in range(40)]
    rng = np.random.default_rng(3)
    s = np.sort(np.asarray(x))
    old = s[rng.integers(0, len(s), size=(2000, len(s)))].mean(axis=1)  # the former code
    assert bootstrap_mean(x, seed=3) == tuple(float(q) for q in np.quantile(old, [.025, .975]))
    assert stratified_bootstrap([x], seed=3) == bootstrap_mean(x, seed=3)


def test_macro_interval_is_stratified_and_matches_its_statement():
    # one stratum of 0/1 values: Wilson's, as the micro accuracy has it
    one = strata_interval([[1, 0, 1, 1]])
    assert one == proportion_interval(3, 4)
    rng = np.random.default_rng(0)
    strata = [list(rng.integers(0, 2, n).astype(float)) for n in (36, 36, 32, 28, 40)]
    ci = strata_interval(strata)
    assert ci.method.startswith("stratified percentile bootstrap") and ci.low < ci.high
    stated = strata_precision([len(s) for s in strata], "pairs").half_width
    assert abs(100 * (ci.high - ci.low) / 2 / stated - 1) < 0.1
    # strata resampled on their own: a small stratum weighs as much as a large one in the
    # macro mean and varies as it does, so the interval is wider than the pooled values'
    small, large = [0.0, 1.0] * 4, [0.0, 1.0] * 100
    macro, pooled = strata_interval([small, large]), strata_interval([small + large])
    assert macro.high - macro.low > 1.5 * (pooled.high - pooled.low)


def test_mr_score_of_counts_is_the_metrics_one():
    from mindprobe.benchmarks.mr_gsm8k.interval import mr_scores
    from mindprobe.benchmarks.mr_gsm8k.metrics import metrics_from_counts

    rng = np.random.default_rng(1)
    for _ in range(50):
        tp, fn, fp, tn, step, reason = (int(v) for v in rng.integers(0, 9, 6))
        m = metrics_from_counts(tp + fn, fp + tn + step + reason, tp, tn + step + reason,
                                step + reason, reason)
        got = mr_scores(np.array([tp, fn, fp, tn, step, reason]))
        assert got == pytest.approx(m["mr_score"])
