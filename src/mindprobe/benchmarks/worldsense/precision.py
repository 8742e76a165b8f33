"""The half-width WorldSense's own interval will have for a sample, stated before the run.

The paper's interval is not over trials: it is 1.96 × √(V / N) over *tuples*, where V is the
variance of a tuple's accuracy pooled over the equally weighted cells (problem family × size)
and N counts every cell as often as its smallest one (spec §3.5, `stat_by_group`). So the width
depends on the tuples each cell gets, which the plan knows exactly, and on V, which depends on
the model: it is taken as the largest V measured on the full test set among the released
results (GPT3.5, GPT4, Llama2-chat, Llama2-FT+1M) and a uniform guess among each trial's
allowed answers (`TUPLE_VARIANCE`, measured by bench/worldsense_design_effect.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from mindprobe.core.stats import Z95, Precision

#: The largest pooled variance of a tuple's accuracy on the full test set: a uniform guess's
#: 0.1110 (seeded; GPT3.5 0.1055, GPT4 0.0788, Llama2-FT+1M 0.0669, Llama2-chat 0.0427).
#: Measured by `python bench/worldsense_design_effect.py` (tests check it against the data).
TUPLE_VARIANCE = 0.1110


def effective_tuples(cells: Iterable[tuple[Any, Any]]) -> int:
    """N of the analysis for tuples in these (problem family, size) cells (one entry per
    tuple): sizes regrouped within a family, then families, each counted as often as the
    smallest. That is what `regroup_equal` (the analysis's) gives for cells of n tuples, in
    closed form: a family of k sizes counts k × its smallest size's n, the whole F × its
    smallest family's (tests/core/test_precision.py holds the two equal), so a plan does not
    import pandas for it."""
    sizes: dict[Any, list[int]] = {}
    for (family, _), n in Counter(cells).items():
        sizes.setdefault(family, []).append(n)
    by_family = [len(ns) * min(ns) for ns in sizes.values()]
    return len(by_family) * min(by_family) if by_family else 0


def stated_precision(trials: Iterable[dict[str, Any]]) -> Precision:
    """The 95% half-width (accuracy points) the analysis will give for these trials."""
    tuples = {(t.get("problemname"), t.get("problemsize"), t["tuple_ID"]) for t in trials}
    n = effective_tuples((p, s) for p, s, _ in tuples)
    if n == 0:
        return Precision(None, " points", "no tuples planned")
    half = 100 * Z95 * (TUPLE_VARIANCE / n) ** 0.5
    return Precision(half, " points", f"the paper's interval over tuples: {len(tuples):,} "
                     f"tuples in equally weighted cells count as N = {n:,} (each cell as "
                     f"often as its smallest), tuple variance {TUPLE_VARIANCE} (the largest "
                     "of the released results and chance)")


def measured_variances(testset_dir: Any, seed: int = 0) -> dict[str, float]:
    """V (the pooled variance of a tuple's accuracy, as the analysis computes it) of every
    released results file of the full test set, and of a uniform guess among each trial's
    allowed answers (seeded): what `TUPLE_VARIANCE` is the largest of."""
    import numpy as np

    from mindprobe.benchmarks.worldsense.data import load_testset
    from mindprobe.benchmarks.worldsense.metrics import analyse
    from mindprobe.benchmarks.worldsense.upstream import load_results, results_from_pairs

    trials = load_testset(testset_dir)
    rng = np.random.default_rng(seed)
    guesses = results_from_pairs(
        ((int(k), e[rng.integers(len(e))]) for k, e in zip(trials["Key"], trials["expectedresp"],
                                                           strict=True)), "basic", "chance")
    out = {}
    for results in (load_results(testset_dir), guesses):
        overall = analyse(trials, results, warn=lambda _: None).accuracy_overall
        out.update(zip(overall["modelname"].astype(str), overall["var"].astype(float),
                       strict=True))
    return out
