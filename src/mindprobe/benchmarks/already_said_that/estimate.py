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
from mindprobe.core.results import Results

from .turns import oracle_turns

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
    # what one turn adds besides its chat: the CoT call's messages and reasoning
    cot_prompt = 2 * reason_msg + cot_reasoning_tokens + answer_msg
    cot_prefill = reason_msg + cot_reasoning_tokens + answer_msg
    keys = ("turns", "requests", "prompt_tokens", "prefill_tokens", "completion_tokens")
    totals = dict.fromkeys(keys, 0)
    early = dict.fromkeys(keys, 0)  # within each chat's first `also_turns` turns
    max_prompt = 0
    for idx, words in enumerate(samples):
        context = count_tokens(system) + over
        new_tokens = context  # not yet prefilled
        # per turn: the chat sent (context), what is not prefilled yet, the answer's tokens
        contexts, fresh, tags = [], [], []
        for message, answer in oracle_turns(variant, idx, seed, words, pool, max_turns):
            user = count_tokens(message) + over
            context += user
            contexts.append(context)
            fresh.append(new_tokens + user)
            tag = count_tokens(answer)
            tags.append(tag)
            context += tag + over  # the answer enters the history, with either solver
            new_tokens = tag + over  # next turn re-reads the answer before the new message
        if contexts:  # the largest prompt: the last turn's (its second call's with CoT)
            max_prompt = max(max_prompt, contexts[-1] + (cot_prefill if cot else 0))
        for part, n in ((totals, len(contexts)), (early, min(also_turns, len(contexts)))):
            part["turns"] += n
            part["requests"] += 2 * n if cot else n
            # CoT: two calls, the first with the reasoning message, the second with the
            # reasoning and the answer message too (module docstring)
            part["prompt_tokens"] += 2 * sum(contexts[:n]) + cot_prompt * n if cot \
                else sum(contexts[:n])
            part["prefill_tokens"] += sum(fresh[:n]) + (cot_prefill * n if cot else 0)
            part["completion_tokens"] += sum(tags[:n]) + (cot_reasoning_tokens * n if cot
                                                          else 0)
    out = {"samples": len(samples), **totals, "max_prompt_tokens": max_prompt}
    if also_turns:
        out["within"] = early
    if cot:
        out.update(solver="cot", reasoning_tokens=cot_reasoning_tokens * totals["turns"])
    return out


def estimate_results(variant: str, est: dict[str, Any],
                     price: tuple[float, ...] | None) -> Results:
    """Tokens a run would take if the model survived every turn (the upper bound), and what
    each way of paying for them costs: full re-send per turn (what a chat API bills), provider
    prompt caching at a discount (with a third price), prefix reuse on a local/vLLM engine."""
    resend, reuse, completion = est["prompt_tokens"], est["prefill_tokens"], est["completion_tokens"]
    rows = []
    ways: list[tuple[str, int, float | None]] = [
        ("resend every turn (a chat API bills this)", resend, None)]
    if price and len(price) > 2:
        ways.append((f"provider prompt caching (cached input at {price[2]:g} USD/M)", resend,
                     price[2]))
    ways.append(("prefix reuse on a local / vLLM engine (prefill only)", reuse, None))
    for label, prompt, cached_price in ways:
        row: dict[str, Any] = {"": label, "prompt tokens": prompt, "completion tokens": completion}
        if price:
            if cached_price is None:
                cost = prompt * price[0]
            else:
                cost = reuse * price[0] + (resend - reuse) * cached_price
            row["cost (USD)"] = (cost + completion * price[1]) / 1e6  # shown to 4 digits
        rows.append(row)
    out = Results("already_said_that")
    solver = est.get("solver", "direct")
    out.detail = {"estimate": est, "variant": variant, "solver": solver}
    out.add_table("estimate", rows,
                  f"estimate for {variant}, {solver} solver: {est['samples']} samples, "
                  f"{est['turns']} turns (every chat survives to the end: an upper bound; ~4 "
                  "characters per token)", index=False)
    if solver == "cot" and est["turns"]:
        out.notes.append(
            f"cot: two requests per turn; assumes {est.get('reasoning_tokens', 0) / est['turns']:.0f}"
            " reasoning tokens per turn (upstream's CoT gpt-4 runs wrote ~100); only the "
            "answer stays in the history, so the chat grows as with the direct solver")
    if price:
        out.notes.append(f"prices (USD per million tokens): input {price[0]:g}, output "
                         f"{price[1]:g}" + (f", cached input {price[2]:g}" if len(price) > 2
                                            else ""))
    else:
        out.notes.append("no cost shown: give --price IN[,OUT[,CACHED_IN]] in USD per million "
                         "tokens")
    ratio = resend / reuse if reuse else float("nan")
    out.notes.append(f"prefix reuse prefills {ratio:.1f}x fewer prompt tokens")
    return out
