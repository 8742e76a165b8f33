"""Metrics documents from run records: one per judge, never passing ungraded T3 off as graded.

Records hold each item's raw reply and T1/T2 scores (spec section 5); T3 verdicts come from a
judge, either the one given to `run --judge` (stored in the records) or later ones (stored
per judge under `judgements/`, see judging.py). The same records with different verdict sets
give each judge's numbers, so judges can be compared without re-asking the model.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations
from typing import Any

from .interval import mr_score_interval
from .metrics import aggregate

SCORE_KEYS = ("uuid", "question_type", "label", "t1_hit", "t2_hit", "outcome")


def scored_rows(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records that carry T1/T2 scores (a record that crashed before scoring has none)."""
    return [r for r in records if all(k in r for k in SCORE_KEYS)]


def runtime_verdicts(records: list[dict[str, Any]]) -> dict[str, bool]:
    """T3 verdicts the run's own judge gave (uuid -> verdict), read from the records."""
    return {
        r["uuid"]: bool(r["judge"]["verdict"])
        for r in scored_rows(records)
        if isinstance(r.get("judge"), dict) and "verdict" in r["judge"]
    }


def placeholders_of(config: Mapping[str, Any]) -> tuple[str, ...]:
    """The reply format's placeholders in the run's own templates (recorded in its config)."""
    from .prompts import format_placeholders

    return tuple(format_placeholders(config.get("templates")).values())


def t3_status(block: Mapping[str, Any], judge: str | None) -> str:
    """'graded', 'not graded' or 'partially graded' — the label every display must show."""
    if judge is None:
        return "not graded"
    return "graded" if block["t3_graded"] else "partially graded"


def headline(block: Mapping[str, Any]) -> dict[str, float]:
    """What `mindprobe runs` shows: MR-Score, or its lower bound named as such."""
    if block.get("mr_score") is not None:
        return {"mr_score": block["mr_score"]}
    return {"mr_score_lower_bound": block["mr_score_lower_bound"]}


def metrics_doc(
    records: list[dict[str, Any]],
    config: Mapping[str, Any],
    model_label: str,
    judge: str | None,
    verdicts: Mapping[str, bool] | None,
) -> dict[str, Any]:
    """The run's metrics with one judge's verdicts (judge None: T3 not graded)."""
    rows = scored_rows(records)
    block = aggregate(rows, verdicts if judge is not None else None,
                      placeholders=placeholders_of(config))
    ci = mr_score_interval(rows, verdicts if judge is not None else None)
    return {
        "benchmark": "mr_gsm8k",
        "model": model_label,
        "shots": config.get("shots", 0),
        "question_types": config.get("question_types") or None,
        "n_records": len(records),
        "n_scored": len(rows),
        "n_unscored": len(records) - len(rows),
        "n_errors": sum(1 for r in records if "error" in r),
        "judge": judge,
        "t3": t3_status(block, judge),
        **block,
        "headline": headline(block),
        "headline_ci": ci.as_dict(),
    }


def agreement(verdict_sets: Mapping[str, Mapping[str, bool]]) -> dict[str, dict[str, Any]]:
    """Pairwise agreement of judges on the uuids both judged: {"a | b": {n, agree, rate}}."""
    out = {}
    for a, b in combinations(verdict_sets, 2):
        common = set(verdict_sets[a]) & set(verdict_sets[b])
        agree = sum(verdict_sets[a][u] == verdict_sets[b][u] for u in common)
        out[f"{a} | {b}"] = {
            "n": len(common),
            "agree": agree,
            "rate": agree / len(common) if common else None,
        }
    return out


def judges_doc(
    records: list[dict[str, Any]],
    config: Mapping[str, Any],
    model_label: str,
    judges: Mapping[str, Mapping[str, Any]],
    primary: str | None,
) -> dict[str, Any]:
    """Metrics with the primary judge at top level plus every judge's block under `judges`.

    `judges` maps label -> {"source": ..., "spec": ..., "verdicts": {uuid: bool}}.
    """
    verdicts = judges[primary]["verdicts"] if primary is not None else None
    doc = metrics_doc(records, config, model_label, primary, verdicts)
    rows = scored_rows(records)
    per_judge = {}
    for label, info in judges.items():
        block = aggregate(rows, info["verdicts"], placeholders=placeholders_of(config))
        per_judge[label] = {
            "source": info["source"],
            "spec": info.get("spec"),
            "n_verdicts": len(info["verdicts"]),
            "t3": t3_status(block, label),
            **block,
        }
    doc["judges"] = per_judge
    doc["judge_agreement"] = agreement({k: v["verdicts"] for k, v in judges.items()})
    return doc
