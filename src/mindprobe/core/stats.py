"""Small, benchmark-agnostic statistics: cell moments, SEM and equal-weight regrouping.

Cells are DataFrames with one row per group and columns ``n`` (count), ``mean``, ``var``
(sample variance, ddof=1; NaN when n == 1) and ``q`` (second moment E[x²]), so that coarser
cells can be merged without going back to the raw values.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pandas only in annotations: importing it costs a plan ~0.4 s
    import pandas as pd

#: A statistic of resampled strata (see `stratified_bootstrap`).
Statistic = Callable[[list[np.ndarray]], np.ndarray]

Z95 = 1.96  # two-sided 95% normal quantile, as used for the published confidence intervals
Z95_EXACT = 1.959963984540054  # the same quantile unrounded, for intervals of our own


def exact_sum(values: Iterable[float]) -> float:
    """The correctly rounded sum (``math.fsum``): one value for any order of the same values, so
    a statistic over records never depends on the order they finished in (which concurrency and
    resuming change), where a running sum differs in its last digits."""
    return math.fsum(float(v) for v in values)


def exact_mean(values: Iterable[float]) -> float:
    """``exact_sum`` over the count: the order-free mean (NaN for no values)."""
    vals = [float(v) for v in values]
    return math.fsum(vals) / len(vals) if vals else math.nan


def sem(var: np.ndarray | pd.Series, n: np.ndarray | pd.Series) -> np.ndarray:
    """Standard error √var/√n; NaN where var is undefined or negative."""
    var = np.asarray(var, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(var >= 0, np.sqrt(np.where(var >= 0, var, 0.0)) / np.sqrt(n), np.nan)


def cell_moments(values: pd.DataFrame, by: Sequence[str], column: str) -> pd.DataFrame:
    """Per-group n, mean, sample var and q = var + mean² of ``values[column]``. The values are
    sorted first: pandas' running mean and variance depend on the order of the rows."""
    values = values.sort_values([*by, column], kind="mergesort")
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
    x = np.sort(np.asarray([v for v in values if v is not None and not np.isnan(v)], dtype=float))
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


# -- intervals that name their method and respect the metric's range -------------------------

#: Bootstrap resamples: enough for a stable 95% percentile interval at the precision shown.
N_BOOT = 2000
#: Below this many values an interval of a mean is a bootstrap, not a normal/t approximation.
SMALL_N = 30


@dataclass(frozen=True)
class Interval:
    """A 95% interval and the method that made it, so every view can name it."""

    low: float | None
    high: float | None
    method: str

    def as_dict(self) -> dict[str, Any]:
        return {"low": self.low, "high": self.high, "method": self.method}


def proportion_interval(k: int, n: int) -> Interval:
    """A share k/n: Wilson (within [0, 1] by construction, sound at small n and at 0 or n)."""
    lo, hi = wilson(k, n)
    return Interval(lo, hi, "Wilson 95%")


def bootstrap_mean(values: Sequence[float], n_boot: int = N_BOOT, seed: int = 0
                   ) -> tuple[float, float]:
    """The seeded 95% percentile bootstrap of a mean (one stratum of `stratified_bootstrap`)."""
    return stratified_bootstrap([values], n_boot, seed)


def stratified_bootstrap(strata: Sequence[Sequence[float]], n_boot: int = N_BOOT,
                         seed: int = 0, statistic: Statistic | None = None
                         ) -> tuple[float, float]:
    """The seeded 95% percentile bootstrap of a statistic of strata, each stratum resampled
    on its own, so the interval keeps the design (a small stratum varies as much as it does).
    `statistic` gets each stratum's resamples (an array of n_boot × its size) and returns
    n_boot values; default: the equally weighted mean of the strata's means (SORT's macro
    accuracy over conditions; one stratum: a plain mean). The values are sorted first, so the
    interval depends on the values alone, never on the order the records arrived in (which
    concurrency changes): a run's numbers are the same at any concurrency and on resume."""
    rng = np.random.default_rng(seed)
    draws = []
    for values in strata:
        x = np.sort(np.asarray(values, dtype=float))
        draws.append(x[rng.integers(0, len(x), size=(n_boot, len(x)))])
    stats = statistic(draws) if statistic is not None else \
        sum(d.mean(axis=1) for d in draws) / len(draws)
    lo, hi = np.quantile(stats, [0.025, 0.975])
    return float(lo), float(hi)


def mean_interval(values: Sequence[float], *, bounds: tuple[float, float] | None = None,
                  seed: int = 0) -> Interval:
    """The mean of bounded values (turn counts within [0, max turns], say): a percentile
    bootstrap, which can never leave the values' own range, where a t interval (symmetric, and
    wide at small n) would claim impossible values; clipped to `bounds` besides."""
    x = np.asarray([v for v in values if v is not None and not np.isnan(v)], dtype=float)
    if len(x) < 2 or not x.std() > 0:
        return Interval(None, None, "none (fewer than two distinct values)")
    lo, hi = bootstrap_mean(x, seed=seed)
    if bounds is not None:
        lo, hi = max(lo, bounds[0]), min(hi, bounds[1])
    return Interval(lo, hi, f"percentile bootstrap 95% ({N_BOOT} resamples)")


def strata_interval(strata: Sequence[Sequence[float]], seed: int = 0) -> Interval:
    """The mean of strata means (a macro average): Wilson's interval for one stratum of 0/1
    values, else the stratified bootstrap."""
    kept = [list(v) for v in strata if len(v)]
    if not kept:
        return Interval(None, None, "none (no values)")
    if len(kept) == 1 and set(kept[0]) <= {0, 1}:
        return proportion_interval(int(sum(kept[0])), len(kept[0]))
    lo, hi = stratified_bootstrap(kept, seed=seed)
    return Interval(lo, hi, f"stratified percentile bootstrap 95% ({N_BOOT} resamples, "
                    f"{len(kept)} strata resampled on their own)")


@dataclass(frozen=True)
class Precision:
    """The 95% half-width a headline's own interval will have for the planned items, stated
    before the run (in the headline's unit: points for a share shown in %), and what it
    assumes."""

    half_width: float | None
    unit: str = " points"
    basis: str = ""

    def text(self) -> str:
        if self.half_width is None:
            return "–"
        return f"±{self.half_width:.1f}{self.unit}" + (f" ({self.basis})" if self.basis else "")


def proportion_precision(n: int, what: str = "items") -> Precision:
    """A share over `n` items: at most 1.96·50/√n points (its width at 50%, the widest)."""
    if n <= 0:
        return Precision(None, " points", f"no {what}")
    return Precision(100 * Z95 * 0.5 / n ** 0.5, " points",
                     f"a share over {n:,} {what} at 50%, the widest")


def strata_precision(sizes: Sequence[int], what: str = "items") -> Precision:
    """The equally weighted mean of shares over strata of these sizes: at most
    1.96·√(Σ 0.25/nᵢ)/k (every share at 50%), what `strata_interval` gives then."""
    sizes = [n for n in sizes if n > 0]
    if not sizes:
        return Precision(None, " points", f"no {what}")
    half = 100 * Z95 * sum(0.25 / n for n in sizes) ** 0.5 / len(sizes)
    return Precision(half, " points", f"the mean of {len(sizes)} shares over {sum(sizes):,} "
                     f"{what}, each at 50% (the widest)")


@dataclass(frozen=True)
class PairedDifference:
    """mean(a) − mean(b) over the same items, its interval and a test, from one resampling."""

    diff: float | None
    low: float | None
    high: float | None
    p_value: float | None
    n: int
    method: str
    test: str

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def text(self, scale: float = 1.0, digits: int = 1, unit: str = "") -> str:
        """`+3.2 [−1.0, 7.5] pp, p = 0.14 (exact McNemar, n = 40)` style, one line."""
        if self.diff is None:
            return f"no shared items (n = {self.n})"
        def f(v: float | None) -> str:
            return "–" if v is None else f"{scale * v:+.{digits}f}"
        p = "–" if self.p_value is None else f"{self.p_value:.3g}"
        return (f"{f(self.diff)}{unit} [{f(self.low)}, {f(self.high)}]{unit}, p = {p} "
                f"({self.method}; {self.test}; n = {self.n} paired)")


def paired_difference(a: Sequence[float], b: Sequence[float], *, seed: int = 0
                      ) -> PairedDifference:
    """Difference of two runs on the same items: the interval is a paired percentile bootstrap
    (items resampled together), the test an exact McNemar test where both are 0/1 and a paired
    sign-flip permutation test otherwise. Every comparison in mindprobe uses this one function,
    so a difference and its interval always come from the same resampling. The pairs are
    sorted first: the numbers depend on the pairs alone, not on the order records came in."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError("paired values must have one value per item in both runs")
    order = np.lexsort((y, x))
    x, y = x[order], y[order]
    n = len(x)
    method = f"paired bootstrap 95% ({N_BOOT} resamples)"
    if n == 0:
        return PairedDifference(None, None, None, None, 0, method, "no test")
    d = x - y
    rng = np.random.default_rng(seed)
    lo, hi = paired_bootstrap(d, rng=rng)
    binary = bool(np.isin(x, (0, 1)).all() and np.isin(y, (0, 1)).all())
    if binary:
        p, test = mcnemar_exact(int(((x == 1) & (y == 0)).sum()),
                                int(((x == 0) & (y == 1)).sum())), "exact McNemar test"
    else:
        p, test = _sign_flip_p(d, rng), "paired sign-flip permutation test"
    return PairedDifference(exact_mean(d), lo, hi, p, n, method, test)


def paired_bootstrap(diffs: np.ndarray, n_resamples: int = N_BOOT, seed: int = 0,
                     level: float = 0.95, rng: np.random.Generator | None = None
                     ) -> tuple[float, float]:
    """Percentile interval of the mean of paired differences, items resampled with replacement.

    With few distinct differences (right/wrong scores give -1, 0, 1) each resample is drawn as
    multinomial counts of the distinct values, which is the same distribution, much faster.
    """
    rng = rng or np.random.default_rng(seed)
    diffs = np.asarray(diffs, dtype=float)
    n = len(diffs)
    values, counts = np.unique(diffs, return_counts=True)
    if len(values) <= 256:
        means = rng.multinomial(n, counts / n, size=n_resamples) @ values / n
    else:
        means = np.empty(n_resamples)
        step = max(1, 2_000_000 // n)
        for start in range(0, n_resamples, step):
            k = min(step, n_resamples - start)
            means[start:start + k] = diffs[rng.integers(0, n, size=(k, n))].mean(axis=1)
    alpha = (1 - level) / 2
    lo, hi = np.quantile(means, [alpha, 1 - alpha])
    return float(lo), float(hi)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts b (a right, b wrong) and c."""
    from scipy import stats

    if b + c == 0:
        return 1.0
    return float(min(1.0, stats.binomtest(b, b + c, 0.5).pvalue))


def _sign_flip_p(d: np.ndarray, rng: np.random.Generator) -> float:
    observed = abs(d.mean())
    if not np.any(d):
        return 1.0
    signs = rng.choice((-1.0, 1.0), size=(N_BOOT, len(d)))
    flipped = np.abs((signs * d).mean(axis=1))
    return float((1 + (flipped >= observed - 1e-12).sum()) / (N_BOOT + 1))


# -- closed answer sets: chance, the majority baseline, the answer distribution --------------

def chance_of(scoring: dict[str, Sequence[str]]) -> float:
    """Expected accuracy of a uniform guess over the answers a scoring accepts: `scoring` maps
    each correct label to the answers it is scored right for (WorldSense folds 1 and 2 into
    "decidable"); the guess is uniform over the union of all answers."""
    answers = sorted({a for accepted in scoring.values() for a in accepted})
    if not answers:
        raise ValueError("no answers")
    return float(np.mean([len(set(acc)) / len(answers) for acc in scoring.values()]))


def answer_distribution(answers: Sequence[str], options: Sequence[str]) -> dict[str, float]:
    """Share of each option among the answers (invalid or other answers under "other")."""
    n = len(answers)
    out = {o: (sum(a == o for a in answers) / n if n else 0.0) for o in options}
    other = 1.0 - sum(out.values()) if n else 0.0
    if other > 1e-12:
        out["other"] = other
    return out


def majority_baseline(truths: Sequence[str]) -> tuple[str | None, float | None]:
    """(label, accuracy) of always giving the most frequent correct answer: the score a
    constant answer gets, which a share such as 70.8% must be read against."""
    if not truths:
        return None, None
    counts: dict[str, int] = {}
    for t in truths:
        counts[t] = counts.get(t, 0) + 1
    label = max(sorted(counts), key=lambda k: counts[k])
    return label, counts[label] / len(truths)
