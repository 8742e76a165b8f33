"""One judge call on one FanOutQA answer through the session's ``judge`` role: the request the
judge gets and the verdict kept (`judge.py` builds the prompt and reads the reply)."""

from __future__ import annotations

from typing import Any

from mindprobe.core.model import Request
from mindprobe.core.session import Session

from .data import Question
from .judge import SEED, judge_letter, judge_prompt, parse_judge

#: Reply cap of the judge: it reasons step by step before its letter.
JUDGE_MAX_TOKENS = 1024


def _canned(letter: str) -> str:
    return f"(canned judge reply)\n{letter}\n{letter}"


#: What `--judge random` picks from: consistent (C) or a disagreement (D).
JUDGE_CHOICES = [_canned("C"), _canned("D")]


async def judge_answer(session: Session, q: Question, answer: str) -> dict[str, Any]:
    """The GPT-as-judge verdict on one answer (spec §6.6) through the ``judge`` role.

    An empty answer is not sent (it scores 0 either way). ``verdict``: True for B/C/E, False for
    any other last character, None for an empty judge reply (scored 0)."""
    label = session.model("judge").label
    if not answer.strip():
        return {"label": label, "reply": None, "letter": None, "verdict": False,
                "skipped": "empty answer: scored 0 without a judge call"}
    req = Request(messages=judge_prompt(q.question, q.answer, answer),
                  max_tokens=int(session.config.get("max_tokens") or JUDGE_MAX_TOKENS),
                  temperature=0.0, seed=SEED, choices=JUDGE_CHOICES)
    comp = await session.generate(req, role="judge")
    out: dict[str, Any] = {"label": label, "request": session.take_request("judge")[0],
                           "reply": comp.text, "letter": judge_letter(comp.text),
                           "verdict": parse_judge(comp.text)}
    if len(answer) > 4000:
        out["answer_cut_to"] = 4000
    return out
