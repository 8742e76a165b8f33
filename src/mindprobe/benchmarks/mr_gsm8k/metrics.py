"""Per-item scoring (T1, T2) and the benchmark metrics TPR, TNR, MCC, Acc_step, Acc_reason, MR-Score.

Formulas and quirks follow spec sections 5, 7 and 9 exactly so numbers stay comparable with the
published tables: substring matching for T1, denominators counted from the evaluated records,
MCC 0.0 on a zero denominator and reported unclipped, max(0, MCC) only inside MR-Score.
T3 (the reason check) comes from outside as verdicts; without them T3 is "not graded" and
MR-Score is only bounded, never reported as if graded.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from mindprobe.errors import DataError

from .dataset_file import LABEL_FIELD, LABELS, STEP_FIELD
from .parse import PARSE_ERROR, normalise_judgement, normalise_step, parse_response

W_MCC, W_STEP, W_REASON = 0.2, 0.3, 0.5


def score_item(item: Mapping[str, Any], response_text: str | None) -> dict[str, Any]:
    """Parse one reply and score T1/T2; keeps the raw reply so a run can be rescored offline."""
    label = str(item[LABEL_FIELD]).lower()
    if label not in LABELS:
        raise DataError(
            f"MR-GSM8K item {item.get('uuid')}: label {item[LABEL_FIELD]!r} is not "
            "'correct' or 'wrong'. Fix: load items with mr_gsm8k.load()"
        )
    judgement, error_step, error_text = parse_response(response_text)
    pred = normalise_judgement(judgement)
    t1_hit = label in pred  # substring, not equality (spec 5.2)
    label_step = item[STEP_FIELD]
    pred_step = normalise_step(error_step)
    # A non-int step label (e.g. "N/A" on a wrong item) can never be matched (spec section 2).
    step_is_int = isinstance(label_step, int) and not isinstance(label_step, bool)
    t2_hit = label == "wrong" and t1_hit and step_is_int and pred_step == str(label_step)
    outcome = ("tp" if t1_hit else "fn") if label == "correct" else ("tn" if t1_hit else "fp")
    return {
        "uuid": item["uuid"],
        "question_type": item["question_type"],
        "label": label,
        "label_step": label_step,
        "reply": response_text if response_text is not None else "",
        "judgement": judgement,
        "error_step": error_step,
        "error_text": error_text,
        "pred": pred,
        "pred_step": pred_step,
        "outcome": outcome,
        "t1_hit": t1_hit,
        "t2_hit": t2_hit,
        "needs_judging": t2_hit,
    }


_LETTERS = re.compile(r"[^a-z0-9]+")
_CORRECT, _WRONG = re.compile(r"\bcorrect\b"), re.compile(r"\b(?:wrong|incorrect)\b")
#: Kinds of invalid judgement, in the order they are reported.
INVALID_KINDS = ("unparsed", "placeholder", "both labels", "neither label")


def invalid_kind(judgement: str | None, placeholders: Iterable[str] = ()) -> str | None:
    """Why a `Final Judgement` is not a verdict (None: it is one). Upstream's substring rule
    scores all of these anyway: a parroted placeholder names both labels, so it "matches"
    every item; the strict figures count them as misses instead."""
    if judgement in (None, "", PARSE_ERROR):
        return "unparsed"
    flat = _LETTERS.sub("", judgement.lower())
    for placeholder in placeholders:
        inner = _LETTERS.sub("", placeholder.lower())
        if inner and inner in flat:
            return "placeholder"
    pred = normalise_judgement(judgement)
    named = bool(_CORRECT.search(pred)), bool(_WRONG.search(pred))
    if all(named):
        return "both labels"
    if not any(named):
        return "neither label"
    return None


def strict_rows(rows: Iterable[Mapping[str, Any]], placeholders: Iterable[str] = ()
                ) -> list[dict[str, Any]]:
    """The records with every invalid judgement scored as a miss (T1 and T2)."""
    out = []
    marks = tuple(placeholders)
    for r in rows:
        if invalid_kind(r.get("judgement"), marks) is not None:
            r = {**r, "t1_hit": False, "t2_hit": False}
        out.append(dict(r))
    return out


def mcc(tp: int, tn: int, fp: int, fn: int) -> float:
    """Matthews correlation, unclipped; 0.0 when the denominator is 0 (upstream would crash)."""
    product = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    if product == 0:
        return 0.0
    return (tp * tn - fp * fn) / math.sqrt(product)


def mr_score(mcc_value: float, acc_step: float, acc_reason: float) -> float:
    """MR-Score = 0.2*max(0, MCC) + 0.3*Acc_step + 0.5*Acc_reason (clipping only here)."""
    return W_MCC * max(0.0, mcc_value) + W_STEP * acc_step + W_REASON * acc_reason


def metrics_from_counts(
    n_correct: int,
    n_wrong: int,
    tp: int,
    tn: int,
    step_hits: int,
    reason_hits: int | None = None,
    reason_pending: int = 0,
) -> dict[str, Any]:
    """All metrics from raw counts.

    reason_hits None means T3 was not graded at all; an int with reason_pending > 0 means some
    T2 hits still lack a verdict. In both cases acc_reason and mr_score are None and
    mr_score_lower_bound/upper_bound bracket the true value.
    """
    fp, fn = n_wrong - tn, n_correct - tp
    notes = []
    if n_correct == 0:
        notes.append("no 'correct'-labelled records: TPR reported as 0.0")
    if n_wrong == 0:
        notes.append("no 'wrong'-labelled records: TNR, Acc_step, Acc_reason reported as 0.0")
    if (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn) == 0:
        notes.append("MCC undefined (zero denominator): reported as 0.0")

    def rate(hits: int, total: int) -> float:
        return hits / total if total else 0.0

    graded = reason_hits is not None and reason_pending == 0
    known = reason_hits if reason_hits is not None else 0
    pending = reason_pending if reason_hits is not None else step_hits
    m = mcc(tp, tn, fp, fn)
    acc_step = rate(step_hits, n_wrong)
    acc_reason = rate(known, n_wrong) if graded else None
    return {
        "n": n_correct + n_wrong,
        "n_correct": n_correct,
        "n_wrong": n_wrong,
        "tp": tp,
        "tn": tn,
        "fp": fp,
        "fn": fn,
        "step_hits": step_hits,
        "reason_hits": known if graded else None,
        "reason_hits_known": known,
        "t3_pending": pending,
        "t3_graded": graded,
        "tpr": rate(tp, n_correct),
        "tnr": rate(tn, n_wrong),
        "mcc": m,
        "acc_step": acc_step,
        "acc_reason": acc_reason,
        "mr_score": mr_score(m, acc_step, acc_reason) if acc_reason is not None else None,
        "mr_score_lower_bound": mr_score(m, acc_step, rate(known, n_wrong)),
        "mr_score_upper_bound": mr_score(m, acc_step, rate(known + pending, n_wrong)),
        "warnings": notes,
    }


def _block(rows: list[Mapping[str, Any]], verdicts: Mapping[str, bool] | None,
           placeholders: tuple[str, ...] = ()) -> dict[str, Any]:
    n_correct = sum(r["label"] == "correct" for r in rows)
    tp = sum(r["label"] == "correct" and r["t1_hit"] for r in rows)
    tn = sum(r["label"] == "wrong" and r["t1_hit"] for r in rows)
    step_rows = [r for r in rows if r["t2_hit"]]
    if verdicts is None:
        reason_hits, pending = None, 0
    else:
        judged = [verdicts[r["uuid"]] for r in step_rows if r["uuid"] in verdicts]
        reason_hits, pending = sum(bool(v) for v in judged), len(step_rows) - len(judged)
    block = metrics_from_counts(
        n_correct, len(rows) - n_correct, tp, tn, len(step_rows), reason_hits, pending
    )
    # Replies without a parsable judgement count as wrong judgements (upstream); say how many.
    block["n_unparsed"] = sum(r.get("judgement") in (None, "", PARSE_ERROR) for r in rows)
    block["n_invalid"] = sum(invalid_kind(r.get("judgement"), placeholders) is not None
                             for r in rows)
    return block


def aggregate(
    scored_items: Iterable[Mapping[str, Any]],
    judge_verdicts: Mapping[str, bool] | None = None,
    warn: Callable[[str], None] | None = None,
    placeholders: Iterable[str] = (),
) -> dict[str, Any]:
    """Metrics overall and per question_type from score_item() results.

    judge_verdicts maps uuid -> T3 verdict (judge or human said the explanation matches); only
    T2 hits use it. Overall warnings also go to `warn` when given. `placeholders`: the reply
    format's (prompts.format_placeholders), so parroted ones count as invalid.
    """
    rows = list(scored_items)
    marks = tuple(placeholders)
    result = _block(rows, judge_verdicts, marks)
    kinds = [invalid_kind(r.get("judgement"), marks) for r in rows]
    result["invalid_kinds"] = {k: kinds.count(k) for k in INVALID_KINDS if k in kinds}
    said = ["invalid" if k is not None else
            "wrong" if _WRONG.search(normalise_judgement(r.get("judgement") or "")) else
            "correct" for r, k in zip(rows, kinds, strict=True)]
    result["answers"] = {a: said.count(a) for a in ("correct", "wrong", "invalid")}
    if result["n_invalid"]:
        result["strict"] = _block(strict_rows(rows, marks), judge_verdicts, marks)
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault(row["question_type"], []).append(row)
    result["by_question_type"] = {
        qtype: _block(group, judge_verdicts, marks) for qtype, group in sorted(groups.items())
    }
    if warn is not None:
        for note in result["warnings"]:
            warn(f"MR-GSM8K: {note}")
    return result
