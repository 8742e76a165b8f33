"""GPT-as-judge for FanOutQA (spec §6.6): prompt, reply parsing, cache naming, the metric.

The call itself goes through mindprobe's runner; this module only builds messages and reads
replies, so the judge model and endpoint stay configurable (paper: gpt-4-0613; leaderboard
since Feb 2025: gpt-4o-2024-11-20).
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mindprobe.core.judges import merge_judges

from .data import Answer
from .flatten import str_answer

log = logging.getLogger(__name__)

API_KEY_ENV = "FANOUTQA_OPENAI_API_KEY"  # deliberately not OPENAI_API_KEY (avoids surprise spend)
JUDGE_MODEL_PAPER = "gpt-4-0613"
JUDGE_MODEL_2025 = "gpt-4o-2024-11-20"
TEMPERATURE = 0
SEED = 31415
CONCURRENCY = 20
MAX_SUBMISSION_CHARS = 4000
PASSING_LETTERS = frozenset("bce")  # B superset, C same, E immaterial difference

# The OpenAI-evals ``fact`` model-graded template (evals/registry/modelgraded/fact.yaml, MIT),
# with FanOutQA's edits as specified in mindprobe's spec §6.6: first sentence moved to the
# system message, "Here is the data:" dropped, the option prompt replaced by a reworded
# ``cot_classify`` instruction, and a sixth option (F).
SYSTEM = "You are comparing a submitted answer to an expert answer on a given question."
TEMPLATE = (
    "[BEGIN DATA]\n************\n[Question]: {input}\n************\n[Expert]: {ideal}\n"
    "************\n[Submission]: {completion}\n************\n[END DATA]\n\n"
    "Compare the factual content of the submitted answer with the expert answer. Ignore any "
    "differences in style, grammar, or punctuation.\n"
    "The submitted answer may either be a subset or superset of the expert answer, or it may "
    "conflict with it. Determine which case applies. "
    "First, write out in a step by step manner your reasoning about the factual content to be "
    "sure that your conclusion is correct. Avoid simply stating the correct answers at the "
    'outset. Then print only the single character "A", "B", "C", "D", "E", or "F" (without '
    "quotes or punctuation) on its own line corresponding to the correct answer. At the end, "
    "repeat just the letter again by itself on a new line.\n"
    "(A) The submitted answer is a subset of the expert answer and is fully consistent with it.\n"
    "(B) The submitted answer is a superset of the expert answer and is fully consistent with it.\n"
    "(C) The submitted answer contains all the same details as the expert answer.\n"
    "(D) There is a disagreement between the submitted answer and the expert answer.\n"
    "(E) The answers differ, but these differences don't matter from the perspective of "
    "factuality.\n"
    "(F) The submitted answer does not answer the question or is otherwise invalid."
)


def judge_enabled(env: Mapping[str, str] | None = None) -> tuple[bool, str | None]:
    """Whether the judge may run, and if not why (reported with a null ``gpt`` score)."""
    env = os.environ if env is None else env
    if env.get(API_KEY_ENV):
        return True, None
    return False, f"GPT judge not run: {API_KEY_ENV} is not set (upstream would report 0)"


def judge_prompt(question: str, gold: Answer, candidate: str) -> list[dict[str, str]]:
    """System + user messages for one question; the submission is cut to 4000 characters."""
    if len(candidate) > MAX_SUBMISSION_CHARS:
        log.warning(
            "judge: submission cut from %d to %d characters", len(candidate), MAX_SUBMISSION_CHARS
        )
        candidate = candidate[:MAX_SUBMISSION_CHARS]
    content = TEMPLATE.format(input=question, ideal=str_answer(gold), completion=candidate)
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": content}]


def judge_letter(reply: str | None) -> str | None:
    """The verdict letter: the *last character* of the stripped reply, lowercased."""
    if reply is None:
        return None
    s = reply.strip()
    return s[-1].lower() if s else None


def parse_judge(reply: str | None) -> bool | None:
    """True for b/c/e, False for any other last character, None for an empty/absent reply
    (which the metric scores 0; upstream crashes on it)."""
    letter = judge_letter(reply)
    if letter is None:
        return None
    return letter in PASSING_LETTERS


def judge_cache_name(cache_key: str, judge_model: str, question_id: str, answer: str) -> str:
    """Relative cache path ``llmcache/factual-{key}-{qid}-{h}.txt``; the judge model is folded
    into the key (upstream's key omits it, so two judges would share entries)."""
    h = hashlib.sha256(answer.strip().encode("utf-8")).hexdigest()[:8]
    return f"llmcache/factual-{cache_key}@{judge_model}-{question_id}-{h}.txt"


@dataclass(frozen=True)
class JudgeJob:
    """One judge call to make: ``index`` is the position in evaluation order."""

    index: int
    question_id: str
    messages: list[dict[str, str]]
    cache_name: str | None


def judge_jobs(
    pairs: Sequence[tuple[Any, str | None]],
    cache_key: str | None = None,
    judge_model: str = JUDGE_MODEL_PAPER,
) -> list[JudgeJob]:
    """Calls needed for (question, answer) pairs; unanswered questions need none (score 0)."""
    jobs = []
    for i, (q, ans) in enumerate(pairs):
        if ans is None:
            continue
        name = None if cache_key is None else judge_cache_name(cache_key, judge_model, q.id, ans)
        jobs.append(JudgeJob(i, q.id, judge_prompt(q.question, q.answer, ans), name))
    return jobs


@dataclass(frozen=True)
class JudgeMetric:
    value: float
    raw: list[int]  # 0/1 per scored pair, evaluation order
    n_no_verdict: int  # empty replies among answered pairs (scored 0)
    n_unanswered: int  # no generation: 0 without a call


def judge_metric(verdicts: Sequence[bool | None], answered: Sequence[bool]) -> JudgeMetric:
    """Combine per-pair verdicts (evaluation order) into the ``gpt`` score = Σ/N.

    Unanswered pairs score 0 whatever their verdict; a None verdict (empty reply) scores 0.
    """
    if len(verdicts) != len(answered):
        raise ValueError(f"{len(verdicts)} judge verdicts for {len(answered)} scored answers")
    if not answered:
        raise ValueError("no answers to judge")
    raw = [int(bool(a) and v is True) for v, a in zip(verdicts, answered, strict=True)]
    no_verdict = sum(1 for v, a in zip(verdicts, answered, strict=True) if a and v is None)
    return JudgeMetric(sum(raw) / len(raw), raw, no_verdict, sum(1 for a in answered if not a))


def collect_judges(cfg: dict[str, Any], records: list[dict[str, Any]],
                   judgements: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every judge of a run (verdicts by question id; None: the judge gave no verdict)."""
    own = {r["id"]: r["judge"].get("verdict") for r in records if isinstance(r.get("judge"), dict)}
    return merge_judges(cfg.get("judge_label"), cfg.get("judge"), own, judgements,
                        lambda e: e.get("verdict"))
