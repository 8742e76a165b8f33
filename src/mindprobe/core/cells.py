"""`stats.cell_moments`, `regroup_equal` and `with_sem` over plain lists, bit for bit: a run's
own results (a few thousand values) are scored without importing pandas (~0.45 s, a third of
a small run's whole time).

Bit for bit because every sum is made as the installed pandas makes it, rows in the order the
DataFrame version has them (cells sorted by key, a cell's values ascending): a grouped `sum`
or `mean` is pandas' Kahan-compensated loop (NaN skipped), except that from pandas 3.1 (its
pull request 65103) groups in order are summed by numpy's `add.reduceat` unless the column
holds a NaN; `var` is Welford's running update. The tests hold both versions equal on random
cells and on whole runs with the pandas installed (`tests/core/test_cells.py`), so a pandas
that sums otherwise is caught there.

A cell is a dict: its keys, and ``n``, ``mean``, ``var`` (NaN when n == 1), ``q`` (var +
mean²), as `stats` documents; `with_sem` adds ``sem`` and ``conf95``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from functools import cache
from typing import Any

import numpy as np

from mindprobe.core.stats import Z95

Cell = dict[str, Any]
NAN = math.nan


def kahan_sum(values: Iterable[float]) -> float:
    """pandas' grouped sum of floats: Kahan-compensated, NaN skipped, 0.0 for none."""
    total = compensation = 0.0
    for v in values:
        if v != v:
            continue
        y = v - compensation
        t = total + y
        compensation = t - total - y
        if compensation != compensation:
            compensation = 0.0
        total = t
    return total


@cache
def sums_by_reduceat() -> bool:
    """Whether the installed pandas sums groups in order by `add.reduceat` (3.1 and later),
    read from its version without importing it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        parts = version("pandas").split(".")[:2]
        return tuple(int("".join(c for c in p if c.isdigit()) or 0) for p in parts) >= (3, 1)
    except (PackageNotFoundError, ValueError):
        return True


def column_sums(segments: Sequence[Sequence[float]]) -> list[float]:
    """Each segment's sum, as pandas sums one column grouped into these segments (in order):
    `add.reduceat` where the column holds no NaN and pandas does so (`sums_by_reduceat`),
    else Kahan's loop skipping NaN. The segments must be the DataFrame's rows in its order,
    each group's rows together and the groups ascending: pandas takes `reduceat` only for
    groups in order (every caller here regroups sorted keys). An empty segment (no group
    pandas would make) is summed by the loop, which `reduceat` would get wrong."""
    flat = [v for seg in segments for v in seg]
    if (not sums_by_reduceat() or any(v != v for v in flat) or not flat
            or not all(segments)):
        return [kahan_sum(seg) for seg in segments]
    starts = np.cumsum([0, *(len(seg) for seg in segments[:-1])])
    return [float(x) for x in np.add.reduceat(np.asarray(flat, dtype=float), starts)]


def welford_var(values: Sequence[float]) -> float:
    """pandas' grouped sample variance (ddof=1; NaN for fewer than two values, NaN skipped)."""
    running, m2, n = 0.0, 0.0, 0
    for v in values:
        if v != v:
            continue
        n += 1
        old = running
        running += (v - old) / n
        m2 += (v - running) * (v - old)
    return m2 / (n - 1) if n > 1 else NAN


def cell_moments(rows: Sequence[dict[str, Any]], by: Sequence[str], column: str,
                 order: Callable[[str, Any], Any] | None = None) -> list[Cell]:
    """Per-group n, mean, var and q of ``column``, groups in key order (`order(key, value)`:
    how the DataFrame sorts that key, e.g. a categorical's codes; default: the value)."""
    sort = order or (lambda _k, v: v)
    groups: dict[tuple[Hashable, ...], list[float]] = {}
    for row in rows:
        groups.setdefault(tuple(row[k] for k in by), []).append(float(row[column]))
    keys = sorted(groups, key=lambda t: tuple(sort(k, v) for k, v in zip(by, t, strict=True)))
    values = [sorted(groups[key]) for key in keys]
    sums = column_sums(values)
    cells = []
    for key, vals, total in zip(keys, values, sums, strict=True):
        n = sum(1 for v in vals if v == v)
        mean = total / n if n else NAN
        var = welford_var(vals)
        cells.append({**dict(zip(by, key, strict=True)), "n": n, "mean": mean, "var": var,
                      "q": var + mean * mean})
    return cells


def regroup_equal(cells: Sequence[Cell], by: Sequence[str],
                  order: Callable[[str, Any], Any] | None = None) -> list[Cell]:
    """`stats.regroup_equal`: children merged into groups ``by``, each child weighted as the
    smallest child of its group (so the mean is the plain mean of the children's means)."""
    sort = order or (lambda _k, v: v)
    groups: dict[tuple[Hashable, ...], list[Cell]] = {}
    for cell in cells:
        groups.setdefault(tuple(cell[k] for k in by), []).append(cell)
    keys = sorted(groups, key=lambda t: tuple(sort(k, v) for k, v in zip(by, t, strict=True)))
    n_eff = [min(c["n"] for c in groups[key]) for key in keys]
    nm = column_sums([[m * c["mean"] for c in groups[key]] for key, m in zip(keys, n_eff,
                                                                               strict=True)])
    nq = column_sums([[m * c["q"] for c in groups[key]] for key, m in zip(keys, n_eff,
                                                                            strict=True)])
    out = []
    for key, m, s_m, s_q in zip(keys, n_eff, nm, nq, strict=True):
        n = m * len(groups[key])
        mean, q = s_m / n, s_q / n
        out.append({**dict(zip(by, key, strict=True)), "n": n, "mean": mean,
                    "var": q - mean * mean, "q": q})
    return out


def with_sem(cells: Sequence[Cell]) -> list[Cell]:
    """`stats.with_sem`: ``sem`` = √var/√n (NaN where var is undefined or negative) and
    ``conf95`` = Z95·sem."""
    out = []
    for cell in cells:
        var = cell["var"]
        sem = math.sqrt(var) / math.sqrt(cell["n"]) if var >= 0 else NAN
        out.append({**cell, "sem": sem, "conf95": Z95 * sem})
    return out
