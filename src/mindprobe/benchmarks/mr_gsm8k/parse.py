"""Parsing of the graded model's reply (spec section 4, 5) and of the judge's reply (section 6).

Every rule here reproduces upstream exactly, quirks included (spec section 9), because published
MR-Scores depend on them: the regexes are case-sensitive and take the first match, and one
missing header turns all three fields into PARSE_ERROR.
"""

from __future__ import annotations

import re

PARSE_ERROR = "PARSE_ERROR"

# Headers as the upstream prompt and script spell them ("Judgement", not "Judgment").
_JUDGEMENT = re.compile(r"Final Judgement:\s*(.*?)\s*First Error Step:", re.DOTALL)
_ERROR_STEP = re.compile(r"First Error Step:\s*(.*?)\s*Error Analysis:", re.DOTALL)
_ERROR_TEXT = re.compile(r"Error Analysis:\s*(.*)", re.DOTALL)

_JUDGE_REASONING = re.compile(
    r"Step-by-Step Reasoning:\s*(.*?)\s*Student Error Reason Analysis:", re.DOTALL
)
_JUDGE_ANALYSIS = re.compile(r"Student Error Reason Analysis:\s*(.*?)\s*Final Decision:", re.DOTALL)
_JUDGE_DECISION = re.compile(r"Final Decision:\s*(.*)", re.DOTALL)

# Upstream maps only "step 0" .. "step 29" (one space) to a number; "step 30" and up do not map.
_STEP_WORDS = {f"step {n}": str(n) for n in range(30)}


def _search_all(text: str | None, patterns: tuple[re.Pattern[str], ...]) -> tuple[str, ...]:
    matches = [p.search(text or "") for p in patterns]
    if any(m is None for m in matches):
        return (PARSE_ERROR,) * len(patterns)
    return tuple(m.group(1) for m in matches if m is not None)


def parse_response(text: str | None) -> tuple[str, str, str]:
    """(judgement, error_step, error_text) of a reply; all PARSE_ERROR if any header is missing.

    None (a failed call) is treated like the empty string upstream substitutes for it.
    """
    judgement, error_step, error_text = _search_all(text, (_JUDGEMENT, _ERROR_STEP, _ERROR_TEXT))
    return judgement, error_step, error_text


def normalise_judgement(judgement: str) -> str:
    """T1 prediction: stripped, lower-cased, and exactly "incorrect" mapped to "wrong"."""
    pred = judgement.strip().lower()
    return "wrong" if pred == "incorrect" else pred


def normalise_step(error_step: str) -> str:
    """T2 prediction: the digits, or N of "step N" (N <= 29); "" when neither applies."""
    step = error_step.strip()
    if step.isdigit():
        return step
    return _STEP_WORDS.get(step.lower(), "")


def parse_judge(text: str | None) -> tuple[str, str, str]:
    """(reasoning, analysis, decision) of a judge reply; all PARSE_ERROR if any header is missing."""
    reasoning, analysis, decision = _search_all(
        text, (_JUDGE_REASONING, _JUDGE_ANALYSIS, _JUDGE_DECISION)
    )
    return reasoning, analysis, decision


def reason_hit(decision: str) -> bool:
    """T3 hit: "correct" anywhere in the lower-cased decision (so "Incorrect" hits too, upstream)."""
    return "correct" in decision.lower()


def judge_verdict(reply: str | None) -> bool:
    """T3 verdict straight from a judge's raw reply."""
    return reason_hit(parse_judge(reply)[2])
