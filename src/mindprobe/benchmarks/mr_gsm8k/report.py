"""Terminal tables for MR-GSM8K: overall and per question type, one table comparing judges.

Values are shown x100 rounded to 0.1, as upstream prints them (JSON keeps full precision).
Without a judge, S+R reads "not graded" and MR-Score is marked as a lower bound, so an
ungraded number can never be mistaken for a graded one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.table import Table

_HOW_TO_JUDGE = "grade T3 with `mindprobe judge mr_gsm8k --run DIR --judge MODEL-SPEC`"


def pct(x: float | None) -> str:
    """x100, rounded to one decimal with Python's round (upstream's display)."""
    return "–" if x is None else f"{round(x * 100, 1):.1f}"


def _reason_cell(block: Mapping[str, Any], graded: bool) -> str:
    if not graded:
        return "not graded"
    if block["acc_reason"] is not None:
        return pct(block["acc_reason"])
    known = block["reason_hits_known"] / block["n_wrong"] if block["n_wrong"] else 0.0
    return f"≥{pct(known)} ({block['t3_pending']} pending)"


def _mr_cell(block: Mapping[str, Any]) -> str:
    if block["mr_score"] is not None:
        return f"[bold]{pct(block['mr_score'])}[/bold]"
    return f"≥{pct(block['mr_score_lower_bound'])} (lower bound)"


def metrics_table(block: Mapping[str, Any], title: str, graded: bool) -> Table:
    """One row for all records, then one per question type."""
    t = Table(title=title, title_justify="left")
    for col in ("scope", "n", "correct", "wrong", "TPR", "TNR", "MCC", "Step", "S+R", "MR-Score"):
        t.add_column(col, justify="left" if col == "scope" else "right")
    rows = [("all", block), *block.get("by_question_type", {}).items()]
    for scope, b in rows:
        t.add_row(
            scope, str(b["n"]), str(b["n_correct"]), str(b["n_wrong"]), pct(b["tpr"]),
            pct(b["tnr"]), pct(b["mcc"]), pct(b["acc_step"]), _reason_cell(b, graded), _mr_cell(b),
        )
    return t


def _counts_line(block: Mapping[str, Any]) -> str:
    reason = block["reason_hits"] if block["reason_hits"] is not None else "not graded"
    return (
        f"TP {block['tp']} · TN {block['tn']} · FP {block['fp']} · FN {block['fn']} · "
        f"step hits {block['step_hits']} · reason hits {reason}"
    )


def _t3_note(block: Mapping[str, Any], judge: str | None, fix: str) -> str | None:
    if judge is None:
        return (
            "[yellow]T3 not graded[/yellow] (no judge): S+R is unknown and MR-Score is only a "
            f"lower bound (reasons counted as wrong){fix}"
        )
    if not block["t3_graded"]:
        return (
            f"[yellow]T3 partially graded[/yellow]: {block['t3_pending']} step hit(s) have no "
            f"verdict from {judge}; MR-Score is a lower bound{fix}"
        )
    return None


def _notes(block: Mapping[str, Any], judge: str | None, console: Console, fix: str) -> None:
    """Raw counts, the T3 status when not fully graded, and metric warnings."""
    console.print(_counts_line(block))
    note = _t3_note(block, judge, fix)
    if note:
        console.print(note)
    for warning in block.get("warnings", []):
        console.print(f"[yellow]warning[/yellow]: {warning}")


def render_metrics(doc: Mapping[str, Any], console: Console) -> None:
    """The run's metrics with its (primary) judge."""
    judge = doc.get("judge")
    types = ", ".join(doc.get("question_types") or []) or "all types"
    title = (
        f"MR-GSM8K · {doc.get('model', 'model')} · {doc.get('shots', 0)}-shot · {types} · "
        f"T3 judge: {judge or 'none'} (values x100)"
    )
    console.print(metrics_table(doc, title, judge is not None))
    if doc.get("n_errors") or doc.get("n_unscored"):
        console.print(
            f"[red]{doc['n_errors']} record(s) with errors[/red] (a failed model call is scored "
            f"as an empty reply, as upstream does); {doc['n_unscored']} record(s) unscored"
        )
    _notes(doc, judge, console, f"; {_HOW_TO_JUDGE}")


def render_judges(doc: Mapping[str, Any], console: Console) -> None:
    """All judges of a run side by side, plus their pairwise agreement."""
    judges = doc.get("judges") or {}
    if not judges:
        console.print(f"no judge has graded T3 of this run yet; {_HOW_TO_JUDGE}")
        return
    t = Table(title="T3 judges of this run (values x100)", title_justify="left")
    for col in ("judge", "source", "verdicts", "reason hits", "pending", "S+R", "MR-Score"):
        t.add_column(col, justify="left" if col in ("judge", "source") else "right")
    for label, b in judges.items():
        t.add_row(
            label, b["source"], str(b["n_verdicts"]), str(b["reason_hits_known"]),
            str(b["t3_pending"]), _reason_cell(b, True), _mr_cell(b),
        )
    console.print(t)
    for pair, a in (doc.get("judge_agreement") or {}).items():
        rate = "–" if a["rate"] is None else f"{a['rate']:.1%}"
        console.print(f"agreement {pair}: {a['agree']}/{a['n']} step hits ({rate})")


def render_upstream(results: Mapping[str, Mapping[str, Any]], console: Console) -> None:
    """Rescored upstream eval-results files: auto (judge replies) and manual verdicts."""
    for path, res in results.items():
        head = f"{path} · {res['n_records']} records · reply field {res['response_key']}"
        judge = res["judge_key"]
        graded_by = f"judge field {judge}" if judge else "no judge field in the file"
        console.print(metrics_table(res["auto"], f"{head} · T3 auto: {graded_by} (values x100)",
                                    judge is not None))
        _notes(res["auto"], judge, console, "")
        if res.get("manual") is not None:
            console.print(metrics_table(res["manual"], f"{head} · T3 manual: {res['manual_key']}",
                                        True))
            _notes(res["manual"], res["manual_key"], console, "")
