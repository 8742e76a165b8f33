"""Worst-case token cost of a run, without a model (for `--estimate`).

Every sample is played by an always-correct oracle, so it lasts the full `max_turns` (the
most expensive outcome). Because the whole chat is re-sent every turn (spec §9, §13), the
prompt cost of a plain client grows quadratically, whereas a backend that reuses the cached
prefix only prefills the previous reply plus the new user message each turn.

The chain-of-thought solver (`--solver cot`) sends COT_INSTRUCTION with the current user
message (so each prompt is that much longer, and with prefix reuse the previous user message is
prefilled again, since it was sent with the instruction), writes its reasoning before the tag
(COT_REASONING_TOKENS per turn, an assumption: upstream's CoT gpt-4 runs wrote 1.7-2.7M output
tokens per 250-sample run, about 100 per turn), and keeps only the tag in the history, so the
prompts grow exactly as with the direct solver.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .episode import Episode
from .prompt import with_cot_instruction

#: Assumed reasoning tokens of one chain-of-thought turn (before the answer tag).
COT_REASONING_TOKENS = 100


def _default_count(text: str) -> int:
    return max(1, len(text) // 4)


def estimate_tokens(
    variant: str,
    samples: Sequence[Sequence[str]],
    pool: Sequence[tuple[str, str]],
    example: tuple[str, str],
    seed: int,
    count_tokens: Callable[[str], int] = _default_count,
    max_turns: int = 100,
    solver: str = "direct",
    cot_reasoning_tokens: int = COT_REASONING_TOKENS,
) -> dict[str, Any]:
    """Token totals for the selected `samples` (idx = position), counted per message.

    Keys: `samples`, `turns`, `prompt_tokens` (resend-everything client), `prefill_tokens`
    (prefix-reusing backend), `completion_tokens`, `max_prompt_tokens` (largest single prompt,
    i.e. the context a backend must hold); for the CoT solver also `solver` and
    `reasoning_tokens` (the assumed reasoning, included in `completion_tokens`).
    Chat-template overhead is not included.
    """
    if solver not in ("direct", "cot"):
        raise ValueError(f"solver must be direct or cot, got {solver!r}")
    cot = solver == "cot"
    totals = {"turns": 0, "prompt_tokens": 0, "prefill_tokens": 0, "completion_tokens": 0}
    reasoning_total = 0
    max_prompt = 0
    for idx, words in enumerate(samples):
        episode = Episode(
            variant=variant, idx=idx, seed=seed, words=words, pool=pool, example=example,
            max_turns=max_turns,
        )
        context = count_tokens(episode.messages[0]["content"])  # the system prompt
        new_tokens = context  # not yet prefilled
        while not episode.finished:
            message = episode.next_user_message()
            user = count_tokens(message)
            sent_user = count_tokens(with_cot_instruction(message)) if cot else user
            context += user  # the history keeps the plain message
            new_tokens += sent_user
            sent = context - user + sent_user
            totals["prompt_tokens"] += sent
            totals["prefill_tokens"] += new_tokens
            max_prompt = max(max_prompt, sent)
            answer = f"[answer: {episode.expected}]"
            episode.observe(answer)
            tag = count_tokens(answer)
            reasoning = cot_reasoning_tokens if cot else 0
            totals["completion_tokens"] += tag + reasoning
            reasoning_total += reasoning
            context += tag  # only the tag enters the history, with either solver
            # Next turn the reply is re-read before the new message; a CoT turn's user message
            # too, as it was sent with the instruction and is now plain.
            new_tokens = tag + (user if cot else 0)
            totals["turns"] += 1
    out = {"samples": len(samples), **totals, "max_prompt_tokens": max_prompt}
    if cot:
        out.update(solver=solver, reasoning_tokens=reasoning_total)
    return out
