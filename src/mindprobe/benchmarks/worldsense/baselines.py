"""WorldSense chance, bias at chance, the constant-answer baseline and the answers given, all
computed from the paper's own scoring (spec §3.3), never assumed.

The scoring folds answers into classes: on the Compl.* problems 1 and 2 both mean "decidable",
so a uniform guess among 1, 2, 3 is right 2/3 of the time on a decidable trial and 1/3 on an
undecidable one; the per-answer weights balance each tuple. Bias is +1 for TRUE, POSSIBLE, 1 or
2 and −1 for FALSE, IMPOSSIBLE or 3 (0 for an invalid answer), weighted the same way, so a
uniform guess has bias +1/3 on Compl.* (two of its three options count +1), not 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from mindprobe.benchmarks.worldsense.metrics import _BIAS, _WEIGHT, is_correct
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


def _weighted(rows: list[Mapping[str, Any]], value: Any) -> float | None:
    total = exact_sum(_WEIGHT.get(str(r["goldresp"]), 0.0) for r in rows)
    if not total:
        return None
    return exact_sum(_WEIGHT.get(str(r["goldresp"]), 0.0) * value(r) for r in rows) / total


def chance_table(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """problem -> chance accuracy, bias at chance, the best constant answer and its accuracy,
    and the share of each answer the model gave (invalid answers under "invalid")."""
    out: dict[str, dict[str, Any]] = {}
    trials = _trials(records)
    for name, rows in trials.items():
        seen = {str(o) for r in rows for o in r["expectedresp"]}
        options = [o for o in OPTION_ORDER if o in seen] + sorted(seen - set(OPTION_ORDER))

        def guess(r: Mapping[str, Any]) -> float:
            allowed = [str(o) for o in r["expectedresp"]]
            return sum(is_correct(o, str(r["goldresp"])) for o in allowed) / len(allowed)

        def guess_bias(r: Mapping[str, Any]) -> float:
            allowed = [str(o) for o in r["expectedresp"]]
            return sum(_BIAS.get(o, 0.0) for o in allowed) / len(allowed)

        constant = {o: _weighted(rows, lambda r, o=o: float(is_correct(o, str(r["goldresp"]))))
                    for o in options}
        best = max(options, key=lambda o: (constant[o] or 0.0, -options.index(o)))
        given = {o: sum(str(r.get("resp")) == o for r in rows) / len(rows) for o in options}
        given["invalid"] = 1.0 - exact_sum(given.values())
        out[name] = {"chance": _weighted(rows, guess), "bias_at_chance": _weighted(rows, guess_bias),
                     "majority_answer": best, "majority_baseline": constant[best],
                     "answers": given}
    if out:  # the paper's ALL is the plain mean over problems, and so are these
        parts = list(out.values())
        everything = [r for rows in trials.values() for r in rows]
        options = [o for o in OPTION_ORDER if any(o in p["answers"] for p in parts)]
        out = {"ALL": {
            "chance": exact_mean(p["chance"] or 0.0 for p in parts),
            "bias_at_chance": exact_mean(p["bias_at_chance"] or 0.0 for p in parts),
            "majority_answer": "per problem",
            "majority_baseline": exact_mean(p["majority_baseline"] or 0.0 for p in parts),
            "answers": {**{o: sum(str(r.get("resp")) == o for r in everything) / len(everything)
                           for o in options},
                        "invalid": sum(str(r.get("resp")) not in OPTION_ORDER
                                       for r in everything) / len(everything)}},
            **out}
    return out
