"""Worst-case token cost of a run, without a model (for `--estimate`).

Every sample is played by an always-correct oracle, so it lasts the full `max_turns` (the
most expensive outcome). Because the whole chat is re-sent every turn (spec §9, §13), the
prompt cost of a plain client grows quadratically, whereas a backend that reuses the cached
prefix only prefills the previous reply plus the new user message each turn.

The chain-of-thought solver (`--solver cot`, upstream's two calls per turn) sends the chat plus
upstream's reasoning system message, writes its reasoning (COT_REASONING_TOKENS per turn, an
assumption: upstream's CoT gpt-4 runs wrote 1.7-2.7M output tokens per 250-sample run, about 100
per turn), then sends all that again with the reasoning and upstream's answer system message;
only the answer stays in the history, so the chat grows as with the direct solver. With prefix
reuse, the next turn re-reads from the end of the last user message (the system messages and
the reasoning are not in the history).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from mindprobe.core.estimate import message_tokens, text_tokens

from .episode import Episode

#: Assumed reasoning tokens of one chain-of-thought turn (its first call's reply).
COT_REASONING_TOKENS = 100


def _default_count(text: str) -> int:
    """The counter in force (`core.estimate`: ~4 characters per token, or as a plan measured)."""
    return text_tokens(text)


def estimate_tokens(
    variant: str,
    samples: Sequence[Sequence[str]],
    pool: Sequence[tuple[str, str]],
    system: str,
    seed: int,
    count_tokens: Callable[[str], int] = _default_count,
    max_turns: int = 100,
    cot_messages: dict[str, str] | None = None,
    cot_reasoning_tokens: int = COT_REASONING_TOKENS,
    per_message: int | None = None,
    also_turns: int = 0,
) -> dict[str, Any]:
    """Token totals for the selected `samples` (idx = position), counted per message.

    Keys: `samples`, `turns`, `requests`, `prompt_tokens` (resend-everything client),
    `prefill_tokens` (prefix-reusing backend), `completion_tokens`, `max_prompt_tokens`
    (largest single prompt, i.e. the context a backend must hold); with `cot_messages` (the
    CoT solver's reason/answer system messages) also `solver` and `reasoning_tokens` (the
    assumed reasoning, included in `completion_tokens`). Each message in a prompt adds
    `per_message` chat-template tokens (default: the counter in force's, `core.estimate`).
    `also_turns`: `within` holds the same totals for chats cut after that many turns (the
    oracle's chats are the same turn for turn up to there: one pass gives both).
    """
    cot = cot_messages is not None
    over = message_tokens(1) if per_message is None else per_message
    reason_msg = count_tokens(cot_messages["reason"]) + over if cot else 0
    answer_msg = count_tokens(cot_messages["answer"]) + over if cot else 0
    keys = ("turns", "requests", "prompt_tokens", "prefill_tokens", "completion_tokens")
    totals = dict.fromkeys(keys, 0)
    early = dict.fromkeys(keys, 0)  # within each chat's first `also_turns` turns
    reasoning_total = 0
    max_prompt = 0
    for idx, words in enumerate(samples):
        episode = Episode(
            variant=variant, idx=idx, seed=seed, words=words, pool=pool, system=system,
            max_turns=max_turns,
        )
        context = count_tokens(system) + over
        new_tokens = context  # not yet prefilled
        turn = 0
        while not episode.finished:
            user = count_tokens(episode.next_user_message()) + over
            context += user
            new_tokens += user
            answer = f"[answer: {episode.expected}]"
            tag = count_tokens(answer)
            if cot:
                first = context + reason_msg
                second = first + cot_reasoning_tokens + answer_msg
                step = (1, 2, first + second, new_tokens + reason_msg + cot_reasoning_tokens
                        + answer_msg, cot_reasoning_tokens + tag)
                max_prompt = max(max_prompt, second)
                reasoning_total += cot_reasoning_tokens
            else:
                step = (1, 1, context, new_tokens, tag)
                max_prompt = max(max_prompt, context)
            for k, v in zip(keys, step, strict=True):
                totals[k] += v
                if turn < also_turns:
                    early[k] += v
            turn += 1
            episode.observe(answer)
            context += tag + over  # the answer enters the history, with either solver
            new_tokens = tag + over  # next turn re-reads the answer before the new message
    out = {"samples": len(samples), **totals, "max_prompt_tokens": max_prompt}
    if also_turns:
        out["within"] = early
    if cot:
        out.update(solver="cot", reasoning_tokens=reasoning_total)
    return out
