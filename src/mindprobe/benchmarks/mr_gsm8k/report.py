"""MR-GSM8K results as tables: overall and per question type, judges side by side, upstream.

Values are x100 rounded to 0.1, as upstream prints them (JSON detail keeps full precision).
Without a judge, S+R is empty and MR-Score is labelled a lower bound, so an ungraded number
can never be mistaken for a graded one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from mindprobe.core.results import Headline, Results
from mindprobe.core.stats import wilson
from mindprobe.report.plots import by_setting, color, frame_of, num
from mindprobe.report.svg import Series, bar_chart

if TYPE_CHECKING:
    from mindprobe.core.store import Run

HOW_TO_JUDGE = "grade T3 with `mindprobe judge mr_gsm8k --run DIR --judge MODEL-SPEC`"


METRIC_COLUMNS = ("TPR", "TNR", "MCC", "Step", "S+R", "MR-Score")


def pct(x: float | None) -> float | None:
    """x100, rounded to one decimal with Python's round (upstream's display)."""
    return None if x is None else round(x * 100, 1)


def _row(scope: str, b: Mapping[str, Any], graded: bool) -> dict[str, Any]:
    mr = b["mr_score"] if b["mr_score"] is not None else b["mr_score_lower_bound"]
    return {
        "scope": scope, "n": b["n"], "correct": b["n_correct"], "wrong": b["n_wrong"],
        "unparsed": b.get("n_unparsed", 0), "invalid": b.get("n_invalid", 0),
        "TPR": pct(b["tpr"]), "TNR": pct(b["tnr"]),
        "MCC": pct(b["mcc"]), "Step": pct(b["acc_step"]),
        "S+R": pct(b["acc_reason"]) if graded else None,
        "MR-Score": pct(mr), "MR-Score is": "graded" if b["mr_score"] is not None
        else "a lower bound",
    }


def metrics_frame(block: Mapping[str, Any], graded: bool) -> pd.DataFrame:
    """One row for all records (and, where replies were invalid, one with them counted as
    misses beside upstream's), then one per question type."""
    rows = [("all", block)]
    if block.get("strict"):
        rows = [("all (upstream)", block), ("all (strict)", block["strict"])]
    rows += list(block.get("by_question_type", {}).items())
    return pd.DataFrame([_row(scope, b, graded) for scope, b in rows])


def counts_line(block: Mapping[str, Any]) -> str:
    reason = block["reason_hits"] if block["reason_hits"] is not None else "not graded"
    return (
        f"TP {block['tp']} · TN {block['tn']} · FP {block['fp']} · FN {block['fn']} · "
        f"step hits {block['step_hits']} · reason hits {reason}"
    )


def t3_note(block: Mapping[str, Any], judge: str | None, fix: str) -> str | None:
    if judge is None:
        return ("T3 not graded (no judge): S+R is unknown and MR-Score is only a lower bound "
                f"(reasons counted as wrong){fix}")
    if not block["t3_graded"]:
        return (f"T3 partially graded: {block['t3_pending']} step hit(s) have no verdict from "
                f"{judge}; MR-Score is a lower bound{fix}")
    return None


def _notes(out: Results, block: Mapping[str, Any], judge: str | None, fix: str) -> None:
    out.notes.append(counts_line(block))
    note = t3_note(block, judge, fix)
    if note:
        out.warnings.append(note)
    out.warnings += list(block.get("warnings", []))


def results_of_doc(doc: Mapping[str, Any]) -> Results:
    """The run's metrics with its (primary) judge, plus every judge when there are several."""
    out = Results("mr_gsm8k", detail=dict(doc))
    judge = doc.get("judge")
    types = ", ".join(doc.get("question_types") or []) or "all types"
    bound = "" if doc.get("mr_score") is not None else "; MR-Score a lower bound"
    title = (f"MR-GSM8K · {doc.get('model', 'model')} · {doc.get('shots', 0)}-shot · {types} · "
             f"T3 judge: {judge or 'none'} (values x100{bound})")
    graded_t3 = judge is not None
    out.add_table("metrics", metrics_frame(doc, graded_t3), title, index=False,
                  digits=dict.fromkeys(METRIC_COLUMNS, 1),
                  hidden=("correct", "wrong", "unparsed", "MR-Score is",
                          *(() if graded_t3 else ("S+R",))), keys=("scope",))
    if doc.get("strict"):
        out.notes.append("all (upstream) = upstream's substring rule, which scores invalid "
                         "verdicts too (the headline, comparable with the paper); all (strict) "
                         "= invalid verdicts counted as misses")
    graded = doc.get("mr_score") is not None
    value = doc.get("mr_score") if graded else doc.get("mr_score_lower_bound")
    if value is not None:
        ci = doc.get("headline_ci") or {}
        out.headline = Headline("MR-Score" if graded else "MR-Score (lower bound)", value,
                                ci.get("low"), ci.get("high"), ci_method=ci.get("method"),
                                n=doc.get("n"), chance=None, percent=True,
                                # always the more frequent verdict: MCC 0, so MR-Score 0
                                majority=0.0 if doc.get("n") else None)
    if doc.get("n_errors") or doc.get("n_unscored"):
        out.warnings.append(
            f"{doc['n_errors']} record(s) with errors (a failed model call is scored as an empty "
            f"reply, as upstream does); {doc['n_unscored']} record(s) unscored")
    n, unparsed = doc.get("n") or 0, doc.get("n_unparsed") or 0
    kinds = doc.get("invalid_kinds") or {}
    out.invalid = (doc.get("n_invalid", unparsed), n)
    out.invalid_kinds = dict(kinds)
    if kinds:
        listed = ", ".join(f"{k} {v}" for k, v in kinds.items())
        out.warnings.append(
            f"{sum(kinds.values())} of {n} replies were not a verdict ({listed}); upstream's "
            "substring rule scores them anyway, so the headline (upstream's) counts them and "
            "the row `all (strict)` counts them as misses")
    if n and unparsed / n > 0.5:
        out.warnings.append(
            f"{unparsed} of {n} replies had no parsable `Final Judgement` (counted as wrong "
            "judgements, as upstream does): the model mostly did not follow the reply format")
    _notes(out, doc, judge, f"; {HOW_TO_JUDGE}")
    out.notes.append(uncertainty_note(doc))
    line = baseline_line(doc)
    if line:
        out.notes.append(line)
    judges = doc.get("judges")
    if judges:
        rows = [{"judge": label, "source": b["source"], "verdicts": b["n_verdicts"],
                 "reason hits": b["reason_hits_known"], "pending": b["t3_pending"],
                 **{k: v for k, v in _row(label, b, True).items() if k in ("S+R", "MR-Score",
                                                                              "MR-Score is")}}
                for label, b in judges.items()]
        out.add_table("judges", pd.DataFrame(rows), "T3 judges of this run (values x100)",
                      index=False, keys=("judge",))
        for pair, a in (doc.get("judge_agreement") or {}).items():
            rate = "–" if a["rate"] is None else f"{a['rate']:.1%}"
            out.notes.append(f"agreement {pair}: {a['agree']}/{a['n']} step hits ({rate})")
    return out


def baseline_line(block: Mapping[str, Any]) -> str | None:
    """The majority-answer baseline and the verdicts given: always naming the more frequent
    label scores its share of T1 (TPR or TNR 100, the other 0), MCC 0 and MR-Score 0."""
    said = block.get("answers")
    n = block.get("n") or 0
    if not said or not n:
        return None
    major = "wrong" if block["n_wrong"] >= block["n_correct"] else "correct"
    share = max(block["n_wrong"], block["n_correct"]) / n
    given = ", ".join(f"{k} {100 * v / n:.1f}%" for k, v in said.items())
    return (f"majority-answer baseline: always '{major}' is right on {100 * share:.1f}% of "
            f"T1 verdicts (MCC 0, MR-Score 0.0); verdicts given: {given}")


def uncertainty_note(block: Mapping[str, Any]) -> str:
    """Wilson 95% intervals of the shares behind MR-Score (upstream prints none): small sets
    such as the 40-record sample are far less certain than their one decimal suggests."""
    parts = []
    for name, k, n in (("TPR", block.get("tp"), block.get("n_correct")),
                       ("TNR", block.get("tn"), block.get("n_wrong")),
                       ("Step", block.get("step_hits"), block.get("n_wrong"))):
        lo, hi = wilson(k or 0, n or 0)
        parts.append(f"{name} –" if lo is None else f"{name} [{pct(lo)}, {pct(hi)}] of {n}")
    return ("95% Wilson intervals: " + ", ".join(parts) + "; MR-Score combines MCC and these "
            "shares, so no interval is given for it")


def upstream_results(results: Mapping[str, Mapping[str, Any]]) -> Results:
    """Rescored upstream eval-results files: auto (judge replies) and manual verdicts."""
    out = Results("mr_gsm8k", detail=dict(results))
    for path, res in results.items():
        head = f"{path} · {res['n_records']} records · reply field {res['response_key']}"
        judge = res["judge_key"]
        graded_by = f"judge field {judge}" if judge else "no judge field in the file"
        out.add_table(f"{path}/auto", metrics_frame(res["auto"], judge is not None),
                      f"{head} · T3 auto: {graded_by} (values x100)", index=False)
        _notes(out, res["auto"], judge, "")
        if res.get("manual") is not None:
            out.add_table(f"{path}/manual", metrics_frame(res["manual"], True),
                          f"{head} · T3 manual: {res['manual_key']}", index=False)
            _notes(out, res["manual"], res["manual_key"], "")
    return out


# -- plots (the report) ----------------------------------------------------------------------------
MR_METRICS = ("TPR", "TNR", "Step", "S+R", "MR-Score")


def plots(runs: Sequence[Run], results: Sequence[Results | None]) -> list[str]:
    """TPR / TNR / Step / S+R (and MR-Score) per question type, models side by side (x100)."""
    out = []
    for setting, pairs in by_setting(runs, results).items():
        per_scope: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        for run, res in pairs:
            t = res.tables.get("metrics")
            if t is None:
                continue
            for row in frame_of(t).to_dict("records"):
                per_scope.setdefault(str(row.get("scope")), []).append((run.model_label, row))
        for scope, rows in per_scope.items():
            series = [Series(m, [num(row.get(k)) for k in MR_METRICS], color=color(m))
                      for m, row in rows]
            n = rows[0][1].get("n")
            out.append(bar_chart(list(MR_METRICS), series, y_range=(0, 100), y_label="x100",
                                 title=f"MR-GSM8K {setting}: {scope} (n={n}); S+R n/a = "
                                 "not judged"))
    return out + contamination_plots(runs)


def contamination_plots(runs: Sequence[Run]) -> list[str]:
    """Official minus fresh T1/T2 accuracy per model, with paired intervals (points)."""
    from .fresh_pairing import contamination_pairs

    series = []
    for official, _, res in contamination_pairs(runs):
        rows = frame_of(res.tables["contamination"]).to_dict("records")
        model = official.model_label
        series.append(Series(model, [num(r["official - fresh"]) for r in rows],
                             lows=[num(r["ci_low"]) for r in rows],
                             highs=[num(r["ci_high"]) for r in rows], color=color(model)))
    if not series:
        return []
    return [bar_chart(["T1 accuracy", "T2 accuracy"], series, y_label="points",
                      refs=[(0.0, "no difference")],
                      title="MR-GSM8K contamination signal: published solutions minus fresh "
                      "ones of the same questions (paired by question, 95% CI)")]
