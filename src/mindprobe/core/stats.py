"""Small, benchmark-agnostic statistics: cell moments, SEM and equal-weight regrouping.

Cells are DataFrames with one row per group and columns ``n`` (count), ``mean``, ``var``
(sample variance, ddof=1; NaN when n == 1) and ``q`` (second moment E[x²]), so that coarser
cells can be merged without going back to the raw values.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

Z95 = 1.96  # two-sided 95% normal quantile, as used for the published confidence intervals
Z95_EXACT = 1.959963984540054  # the same quantile unrounded, for intervals of our own


def sem(var: np.ndarray | pd.Series, n: np.ndarray | pd.Series) -> np.ndarray:
    """Standard error √var/√n; NaN where var is undefined or negative."""
    var = np.asarray(var, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(var >= 0, np.sqrt(np.where(var >= 0, var, 0.0)) / np.sqrt(n), np.nan)


def cell_moments(values: pd.DataFrame, by: Sequence[str], column: str) -> pd.DataFrame:
    """Per-group n, mean, sample var and q = var + mean² of ``values[column]``."""
    grouped = values.groupby(list(by), sort=True, dropna=False, observed=True)[column]
    cells = grouped.agg(["count", "mean", "var"]).reset_index()
    cells = cells.rename(columns={"count": "n"})
    cells["q"] = cells["var"] + cells["mean"] ** 2
    return cells


def regroup_equal(cells: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Merge cells into coarser groups ``by``, giving every child the same weight.

    Each child counts as if it had the smallest child's n (so the mean is the plain average of
    the children's means); children with undefined q add nothing to the pooled second moment.
    """
    keys = list(by)
    n_eff = cells.groupby(keys, sort=False, dropna=False, observed=True)["n"].transform("min")
    parts = cells[keys].assign(n=n_eff, nm=n_eff * cells["mean"], nq=n_eff * cells["q"])
    sums = parts.groupby(keys, sort=True, dropna=False, observed=True)[["n", "nm", "nq"]].sum()
    out = sums.reset_index()
    out["mean"] = out.pop("nm") / out["n"]
    out["q"] = out.pop("nq") / out["n"]
    out["var"] = out["q"] - out["mean"] ** 2
    return out[[*keys, "n", "mean", "var", "q"]]


def with_sem(cells: pd.DataFrame) -> pd.DataFrame:
    """Add ``sem`` and ``conf95`` (= Z95·sem, full precision) columns to a cell table."""
    out = cells.copy()
    out["sem"] = sem(out["var"], out["n"])
    out["conf95"] = Z95 * out["sem"]
    return out


def mean_ci(values: Sequence[float], level: float = 0.95) -> tuple[float | None, float | None]:
    """Student-t interval of a mean (None when fewer than two values or no spread to speak of)."""
    x = np.asarray([v for v in values if v is not None and not np.isnan(v)], dtype=float)
    if len(x) < 2:
        return None, None
    from scipy import stats

    spread = x.std(ddof=1)
    if not spread > 0:  # every value equal: a zero-width "interval" would claim certainty
        return None, None
    half = stats.t.ppf(0.5 + level / 2, len(x) - 1) * spread / np.sqrt(len(x))
    return float(x.mean() - half), float(x.mean() + half)


def wilson_interval(k: np.ndarray | float, n: np.ndarray | float, z: float = Z95_EXACT
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of proportions k/n, element-wise: well defined at 0, n and small
    n (where the normal interval collapses); NaN where n = 0."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        denom = 1 + z * z / n
        centre = (p + z * z / (2 * n)) / denom
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
        # exactly 0 (1) when none (all) succeeded, not a rounding error away from it
        lo = np.where(n > 0, np.where(k <= 0, 0.0, np.clip(centre - half, 0, 1)), np.nan)
        hi = np.where(n > 0, np.where(k >= n, 1.0, np.clip(centre + half, 0, 1)), np.nan)
    return lo[()], hi[()]  # numbers for numbers, arrays for arrays


def wilson(k: float, n: float, z: float = Z95_EXACT) -> tuple[float | None, float | None]:
    """One Wilson interval as floats (None when n = 0)."""
    if n <= 0:
        return None, None
    lo, hi = wilson_interval(k, n, z)
    return float(lo), float(hi)
