"""`core.cells` gives the numbers `core.stats` gives from DataFrames, bit for bit: the cells a
run's scores are made of (n, mean, var, q, and the regrouped and SEM columns), on random
cells with one-value cells (var NaN), uneven sizes, ties and groups in category order."""

from __future__ import annotations

import math
import random

import pandas as pd
import pytest

from mindprobe.core import cells, stats


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def _rows(rng: random.Random) -> list[dict]:
    names = rng.sample(["Infer", "Consist", "Compl", "Other"], rng.randint(1, 4))
    rows = []
    for name in names:
        for size in rng.sample([3, 4, 5, 6], rng.randint(1, 4)):
            for _ in range(rng.choice([1, 1, 2, 3, 7, 40, 130])):
                value = rng.choice([0.0, 0.5, 1.0, 1 / 3, rng.random(), -rng.random()])
                rows.append({"run": "basic", "problem": name, "size": size, "x": value})
    rng.shuffle(rows)
    return rows


@pytest.mark.parametrize("seed", range(40))
def test_the_cells_are_the_dataframes(seed):
    rng = random.Random(seed)
    rows = _rows(rng)
    frame = pd.DataFrame(rows)
    # a categorical in order of appearance groups in that order, as WorldSense's problems do
    frame["problem"] = pd.Categorical(frame["problem"],
                                      categories=list(dict.fromkeys(frame["problem"])))
    seen = {p: i for i, p in enumerate(dict.fromkeys(r["problem"] for r in rows))}

    def order(key, value):
        return seen[value] if key == "problem" else value

    by = ["run", "problem", "size"]
    want = stats.cell_moments(frame, by, "x")
    got = cells.cell_moments(rows, by, "x", order)
    want_p = stats.with_sem(stats.regroup_equal(want, ["run", "problem"]))
    got_p = cells.with_sem(cells.regroup_equal(got, ["run", "problem"], order))
    want_all = stats.with_sem(stats.regroup_equal(want_p, ["run"]))
    got_all = cells.with_sem(cells.regroup_equal(got_p, ["run"]))
    for w, g in ((want, got), (want_p, got_p), (want_all, got_all)):
        assert len(w) == len(g)
        for i, cell in enumerate(g):
            for col, value in cell.items():
                expect = w[col].iloc[i]
                assert _same(float(expect), float(value)) if col not in ("run", "problem") \
                    else expect == value, (col, i, expect, value)


def test_kahan_and_welford_skip_nan():
    assert cells.kahan_sum([]) == 0.0 and cells.kahan_sum([math.nan]) == 0.0
    assert cells.column_sums([[1.0, math.nan], [2.0]]) == [1.0, 2.0]
    assert math.isnan(cells.welford_var([1.0])) and cells.welford_var([1.0, 3.0]) == 2.0


def test_the_summing_follows_the_installed_pandas(monkeypatch):
    """pandas before 3.1 sums every group by Kahan's loop: with that pandas the run's cells are
    Kahan's sums too (the random cells above hold the installed pandas to its own rule)."""
    import importlib.metadata

    values = [[0.1, 0.7, 1e-3, 0.3, 0.9, 1 / 3, 2 / 3, 0.05, 0.6, 0.25]]
    cells.sums_by_reduceat.cache_clear()
    monkeypatch.setattr(importlib.metadata, "version", lambda _name: "2.2.3")
    try:
        assert not cells.sums_by_reduceat()
        assert cells.column_sums(values) == [cells.kahan_sum(values[0])]
    finally:
        cells.sums_by_reduceat.cache_clear()
