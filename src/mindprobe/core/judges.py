"""Judges of a run, whatever the benchmark: the run's own judge (verdicts inside the records)
merged with later judge passes (`judgements/<label>.jsonl`), and which one fills the tables."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mindprobe.errors import UsageError

Judgements = dict[str, tuple[dict[str, Any], list[dict[str, Any]]]]


def merge_judges(own_label: str | None, own_spec: str | None, own_verdicts: dict[str, Any],
                 judgements: Judgements, verdict: Callable[[dict[str, Any]], Any] = lambda e:
                 e["verdict"]) -> dict[str, dict[str, Any]]:
    """label -> {source, spec, verdicts by item id}: the run's own judge first; a later pass
    under the same label only fills in what the run's own verdicts lack."""
    judges: dict[str, dict[str, Any]] = {}
    if own_label:
        judges[own_label] = {"source": "run", "spec": own_spec, "verdicts": own_verdicts}
    for label, (meta, entries) in judgements.items():
        verdicts = {e["id"]: verdict(e) for e in entries if "verdict" in e and "error" not in e}
        if label in judges:
            judges[label].update(source="run+judge",
                                 verdicts={**verdicts, **judges[label]["verdicts"]})
        else:
            spec = (meta.get("model") or {}).get("judge") or meta.get("spec")
            judges[label] = {"source": "judge", "spec": spec, "verdicts": verdicts}
    return judges


def primary_judge(judges: dict[str, Any], requested: str | None, own: str | None) -> str | None:
    """The judge whose verdicts fill the tables: the one asked for, else the run's own, else
    the only one; asking for an unknown label is an error listing the known ones."""
    if requested is not None:
        if requested not in judges:
            known = ", ".join(judges) or "none yet"
            raise UsageError(f"this run has no judge labelled {requested!r}; judges: {known}")
        return requested
    if own in judges:
        return own
    return next(iter(judges)) if len(judges) == 1 else None
