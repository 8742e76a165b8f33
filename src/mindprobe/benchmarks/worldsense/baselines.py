"""WorldSense chance, bias at chance, the constant-answer baseline and the answers given, all
computed from the paper's own scoring (spec §3.3), never assumed.

The scoring folds answers into classes: on the Compl.* problems 1 and 2 both mean "decidable",
so a uniform guess among 1, 2, 3 is right 2/3 of the time on a decidable trial and 1/3 on an
undecidable one; the per-answer weights balance each tuple. Bias is +1 for TRUE, POSSIBLE, 1 or
2 and −1 for FALSE, IMPOSSIBLE or 3 (0 for an invalid answer), weighted the same way, so a
uniform guess has bias +1/3 on Compl.* (two of its three options count +1), not 0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from mindprobe.benchmarks.worldsense.answers import _BIAS, _WEIGHT, is_correct
from mindprobe.core.stats import exact_mean, exact_sum

CHANCE_DEFINITION = (
    "chance = the paper's weighted accuracy of a uniform guess among each trial's allowed "
    "answers (1 and 2 both count as 'decidable'); bias = weighted mean of +1 for TRUE, "
    "POSSIBLE, 1 or 2 and −1 for FALSE, IMPOSSIBLE or 3 (0 invalid): > 0 leans to "
    "TRUE/POSSIBLE/decidable; 'bias at chance' is a uniform guess's (+0.33 on Compl.*)")


def _trials(records: Iterable[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    out: dict[str, list[Mapping[str, Any]]] = {}
    for r in records:
        if r.get("expectedresp") and r.get("goldresp") is not None:
            out.setdefault(str(r.get("problemname")), []).append(r)
    return out


#: Options in the order the paper lists them; an invalid answer last.
OPTION_ORDER = ("TRUE", "FALSE", "POSSIBLE", "IMPOSSIBLE", "1", "2", "3")


def _weighted(patterns: Mapping[tuple[str, tuple[str, ...]], int],
              value: Callable[[str, tuple[str, ...]], float]) -> float | None:
    """The weighted mean of `value(gold, allowed)` over trials counted by (gold, allowed)."""
    total = exact_sum(n * _WEIGHT.get(g, 0.0) for (g, _), n in patterns.items())
    if not total:
        return None
    return exact_sum(n * _WEIGHT.get(g, 0.0) * value(g, a)
                     for (g, a), n in patterns.items()) / total


def _guess(gold: str, allowed: tuple[str, ...]) -> float:
    return sum(is_correct(o, gold) for o in allowed) / len(allowed)


def _guess_bias(gold: str, allowed: tuple[str, ...]) -> float:
    return sum(_BIAS.get(o, 0.0) for o in allowed) / len(allowed)


def chance_table(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """problem -> chance accuracy, bias at chance, the best constant answer and its accuracy,
    and the share of each answer the model gave (invalid answers under "invalid"). Trials are
    counted by (gold answer, allowed answers) first: a problem has a handful of such patterns,
    so 20,000 trials cost what a few dozen do (and the sums do not depend on record order)."""
    out: dict[str, dict[str, Any]] = {}
    trials = _trials(records)
    for name, rows in trials.items():
        patterns: Counter[tuple[str, tuple[str, ...]]] = Counter()
        for (gold, allowed), n in Counter((r["goldresp"], tuple(r["expectedresp"]))
                                          for r in rows).items():
            patterns[str(gold), tuple(map(str, allowed))] += n
        seen = {o for _, allowed in patterns for o in allowed}
        options = [o for o in OPTION_ORDER if o in seen] + sorted(seen - set(OPTION_ORDER))
        constant = {o: _weighted(patterns, lambda g, _, o=o: float(is_correct(o, g)))
                    for o in options}
        best = max(options, key=lambda o: (constant[o] or 0.0, -options.index(o)))
        answered = Counter(str(r.get("resp")) for r in rows)
        given = {o: answered[o] / len(rows) for o in options}
        given["invalid"] = 1.0 - exact_sum(given.values())
        out[name] = {"chance": _weighted(patterns, _guess),
                     "bias_at_chance": _weighted(patterns, _guess_bias),
                     "majority_answer": best, "majority_baseline": constant[best],
                     "answers": given}
    if out:  # the paper's ALL is the plain mean over problems, and so are these
        parts = list(out.values())
        everything = [r for rows in trials.values() for r in rows]
        answered = Counter(str(r.get("resp")) for r in everything)
        options = [o for o in OPTION_ORDER if any(o in p["answers"] for p in parts)]
        out = {"ALL": {
            "chance": exact_mean(p["chance"] or 0.0 for p in parts),
            "bias_at_chance": exact_mean(p["bias_at_chance"] or 0.0 for p in parts),
            "majority_answer": "per problem",
            "majority_baseline": exact_mean(p["majority_baseline"] or 0.0 for p in parts),
            "answers": {**{o: answered[o] / len(everything) for o in options},
                        "invalid": sum(n for a, n in answered.items() if a not in OPTION_ORDER)
                        / len(everything)}},
            **out}
    return out
