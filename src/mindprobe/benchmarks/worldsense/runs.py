"""WorldSense results of a mindprobe run, computed by exactly the code that analyses upstream
results files: a run's records become a (Key, resp) results table plus the trial fields the
scoring needs."""

from __future__ import annotations

from typing import Any

import pandas as pd

from mindprobe.benchmarks.worldsense.data import results_from_pairs
from mindprobe.benchmarks.worldsense.metrics import JOIN_FIELDS, analyse
from mindprobe.benchmarks.worldsense.report import to_json
from mindprobe.core.results import Headline, Results

CHANCE_NOTE = ("chance: 50% on TRUE/FALSE questions, 33% on 3-way questions (the bias column "
               "shows a preference for the first option when positive)")


def frames(records: list[dict[str, Any]], prompting: str, label: str
           ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(trials, results) tables of a run's records (errored records excluded by the caller)."""
    cols = [c for c in JOIN_FIELDS if records and c in records[0]]
    trials = pd.DataFrame.from_records([{c: r.get(c) for c in cols} for r in records],
                                       columns=cols or list(JOIN_FIELDS))
    results = results_from_pairs(((int(r["Key"]), r["resp"]) for r in records), prompting, label)
    return trials, results


def results_of_run(records: list[dict[str, Any]], prompting: str, label: str) -> Results:
    """Accuracy and bias per problem with upstream's 95% CIs; invalid answers counted."""
    out = Results("worldsense")
    ok = [r for r in records if "error" not in r]
    invalid = sum(1 for r in ok if not r.get("resp"))
    out.detail = {"n_trials": len(ok), "n_invalid": invalid, "accuracy": {}, "bias": {}}
    if not ok:
        out.warnings.append("no finished trials to analyse")
        return out
    warnings: list[str] = []
    doc = to_json(analyse(*frames(ok, prompting, label), warn=warnings.append))
    out.detail.update(doc)
    out.warnings += [w for w in warnings if "PARTIAL" not in w]
    for run, problems in doc["accuracy"].items():
        bias = doc["bias"].get(run, {})
        rows = [{"problem": name, "accuracy": _pct(s.get("mean")), "acc ±95": _pct(s.get("conf95")),
                 "bias": bias.get(name, {}).get("mean"), "bias ±95": bias.get(name, {}).get("conf95")}
                for name, s in problems.items()]
        out.add_table(f"accuracy/{run}", pd.DataFrame(rows),
                      f"WorldSense {run} ({len(ok)} trials, {invalid} invalid answers)", index=False)
    run = doc["accuracy"].get(f"{prompting}/{label}", {})
    head = run.get("ALL") or next(iter(run.values()), None)
    if head is not None and head.get("mean") is not None:
        half = head.get("conf95")
        m = head["mean"]
        out.headline = Headline(
            "accuracy", m, None if half is None else m - half, None if half is None else m + half,
            chance=None, n=len(ok), ci_method="upstream: mean of per-cell SEMs × 1.96")
    out.notes.append(CHANCE_NOTE)
    if invalid:
        share = invalid / len(ok)
        msg = f"{invalid} of {len(ok)} answers ({share:.0%}) were not one of the allowed options"
        (out.warnings if share > 0.5 else out.notes).append(
            msg + ("; the model mostly did not answer in the expected form (try --scoring "
                   "logprob or --prompting constrained)" if share > 0.5 else ""))
    return out


def _pct(v: Any) -> float | None:
    return None if v is None else 100 * float(v)
