"""Worst-case token cost of a run, without a model (for `--estimate`).

Every sample is played by an always-correct oracle, so it lasts the full `max_turns` (the
most expensive outcome). Because the whole chat is re-sent every turn (spec §9, §13), the
prompt cost of a plain client grows quadratically, whereas a backend that reuses the cached
prefix only prefills the previous reply plus the new user message each turn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .episode import Episode


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
) -> dict[str, Any]:
    """Token totals for the selected `samples` (idx = position), counted per message.

    Keys: `samples`, `turns`, `prompt_tokens` (resend-everything client), `prefill_tokens`
    (prefix-reusing backend), `completion_tokens`, `max_prompt_tokens` (largest single prompt,
    i.e. the context a backend must hold). Chat-template overhead is not included.
    """
    totals = {"turns": 0, "prompt_tokens": 0, "prefill_tokens": 0, "completion_tokens": 0}
    max_prompt = 0
    for idx, words in enumerate(samples):
        episode = Episode(
            variant=variant, idx=idx, seed=seed, words=words, pool=pool, example=example,
            max_turns=max_turns,
        )
        context = count_tokens(episode.messages[0]["content"])  # the system prompt
        new_tokens = context  # not yet prefilled
        while not episode.finished:
            user = count_tokens(episode.next_user_message())
            context += user
            new_tokens += user
            totals["prompt_tokens"] += context
            totals["prefill_tokens"] += new_tokens
            max_prompt = max(max_prompt, context)
            answer = f"[answer: {episode.expected}]"
            episode.observe(answer)
            completion = count_tokens(answer)
            totals["completion_tokens"] += completion
            context += completion
            new_tokens = completion  # the reply is re-read next turn, before the new message
            totals["turns"] += 1
    return {"samples": len(samples), **totals, "max_prompt_tokens": max_prompt}
