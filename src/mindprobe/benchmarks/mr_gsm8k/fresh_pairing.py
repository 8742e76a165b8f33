"""The contamination signal: how much better a model grades the published MR-GSM8K solutions
than fresh ones of the same questions.

The two runs are paired by question (the official file holds several solutions per question;
a fresh run one): per question, the share of its solutions judged right (T1) and, over its wrong
solutions, the share whose first error step was found (T2). The difference official − fresh is
averaged over the questions both runs graded, with core's paired interval (one resampling for
every comparison mindprobe makes).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from mindprobe.core.results import Results
from mindprobe.core.stats import paired_difference


def question_key(question: str) -> str:
    """What pairs a fresh item with the official items of its question (white space folded)."""
    return hashlib.sha256(" ".join(question.split()).encode()).hexdigest()[:16]


def _per_question(records: Iterable[dict[str, Any]], field: str, only_wrong: bool
                  ) -> dict[str, float]:
    hits: dict[str, list[float]] = defaultdict(list)
    for rec in records:
        if "error" in rec or rec.get("question_key") is None:
            continue
        if only_wrong and rec.get("label") != "wrong":
            continue
        hits[rec["question_key"]].append(1.0 if rec.get(field) else 0.0)
    return {k: sum(v) / len(v) for k, v in hits.items()}


def contamination(official: list[dict[str, Any]], fresh: list[dict[str, Any]]
                  ) -> list[dict[str, Any]]:
    """One row per task (T1, T2): the questions paired, both accuracies and their difference
    with a paired 95% interval and test."""
    rows = []
    for task, field, only_wrong in (("T1 accuracy", "t1_hit", False),
                                    ("T2 accuracy", "t2_hit", True)):
        a = _per_question(official, field, only_wrong)
        b = _per_question(fresh, field, only_wrong)
        keys = sorted(set(a) & set(b))
        diff = paired_difference([a[k] for k in keys], [b[k] for k in keys])
        rows.append({
            "task": task,
            "questions": len(keys),
            "official %": 100 * sum(a[k] for k in keys) / len(keys) if keys else None,
            "fresh %": 100 * sum(b[k] for k in keys) / len(keys) if keys else None,
            "official - fresh": None if diff.diff is None else 100 * diff.diff,
            "ci_low": None if diff.low is None else 100 * diff.low,
            "ci_high": None if diff.high is None else 100 * diff.high,
            "p": diff.p_value,
            "method": f"{diff.method}; {diff.test}",
        })
    return rows


def contamination_results(official: list[dict[str, Any]], fresh: list[dict[str, Any]],
                          model: str) -> Results:
    """The signal as tables, for the terminal, JSON and the report."""
    import pandas as pd  # here: the task imports this module, and a plan needs no pandas

    rows = contamination(official, fresh)
    res = Results("mr_gsm8k")
    res.add_table("contamination", pd.DataFrame(rows).set_index("task"),
                  f"{model}: published solutions minus fresh ones of the same questions "
                  "(points; > 0: better on the published ones)")
    res.notes.append("Paired by question; T2 over each question's wrong solutions. A positive "
                     "difference whose interval excludes 0 says the model grades the published "
                     "solutions better than new ones of the same questions.")
    return res


def _keys(run: Any) -> list[dict[str, Any]]:
    """The run's records with their question key (older runs: from the planned items)."""
    if all("question_key" in r for r in run.records):
        return run.records
    by_id = {it.id: question_key(it.payload["item"]["question"]) for it in run.plan().items}
    return [{**r, "question_key": by_id.get(r.get("uuid"))} for r in run.records]


def contamination_pairs(runs: Sequence[Any]) -> list[tuple[Any, Any, Results]]:
    """(official run, fresh run, the signal) for each official and fresh run of the same model
    among `runs` (any two when exactly two are given)."""
    fresh = [r for r in runs if r.variant == "fresh"]
    official = [r for r in runs if r.variant != "fresh"]
    return [(o, f, contamination_results(_keys(o), _keys(f), o.model_label))
            for o in official for f in fresh
            if o.model_label == f.model_label or len(runs) == 2]
