"""Token counts of a plan measured with the model's own tokenizer, where it offers one.

Counting every planned prompt exactly would mean thousands of tokenizer calls (Already Said
That's chats alone count ~10,000 messages), so each benchmark's estimate is made twice: once
recording every text it counts (~4 characters per token), then again with that heuristic
scaled by the ratio the tokenizer gives on a sample of those texts. The sample is drawn with
probability proportional to each text's share of the tokens (systematic, seeded), so the mean
of the sampled ratios estimates the ratio of the totals; the chat template's tokens per message
come from the model rendering a short conversation. Prefix reuse is then measured on the
prompts as before. Without a tokenizer (OpenAI's API, a server without `/tokenize`) the plan
says "heuristic".
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from mindprobe.core.estimate import HEURISTIC, PER_MESSAGE, TokenCounter, counting
from mindprobe.models import Model

#: Texts tokenized per benchmark: the ratio of real to heuristic tokens varies little within
#: one benchmark's prompts (one kind of text), so a few dozen pin it to a few per cent.
SAMPLE = 24


def sample_texts(texts: list[str], k: int, seed: int) -> list[str]:
    """`k` texts drawn systematically with probability proportional to their length."""
    if not texts:
        return []
    total = sum(len(t) for t in texts)
    step = total / k
    at = random.Random(seed).uniform(0, step)
    out, acc = [], 0
    for text in texts:
        acc += len(text)
        while at < acc and len(out) < k:
            out.append(text)
            at += step
    return out


async def template_tokens(model: Model) -> float | None:
    """The chat template's tokens per message: a two-message conversation as the model
    renders it, less its texts' own tokens, halved (None: the model cannot say)."""
    user, assistant = "What comes first?", "The first one."
    chat = await model.count_chat([{"role": "user", "content": user},
                                   {"role": "assistant", "content": assistant}])
    a, b = await model.count_text(user), await model.count_text(assistant)
    if chat is None or a is None or b is None:
        return None
    return max(0.0, (chat - a - b) / 2)


async def measured_counter(model: Model, estimate: Callable[[], Any], seed: int,
                           per_message: float | None) -> TokenCounter | None:
    """The counter for one benchmark's estimate (`estimate` is called once, recording), or
    None when the model has no tokenizer."""
    recorder = TokenCounter(seen=[], pieces=set())
    with counting(recorder):
        estimate()
    picks = sample_texts(recorder.seen or [], SAMPLE, seed)
    if not picks:
        return None
    exact = {}  # candidate answers, scored token by token: a handful, each counted exactly
    for piece in sorted(recorder.pieces or ()):
        n = await model.count_text(piece)
        if n is None:
            return None
        exact[piece] = n
    counted: dict[str, int | None] = {}
    ratios = []
    for text in picks:
        if text not in counted:
            counted[text] = await model.count_text(text)
        n = counted[text]
        if n is None:
            return None
        ratios.append(n / (len(text) / 4))
    ratio = sum(ratios) / len(ratios)
    method = (f"{_tokenizer_name(model)} on {len(counted)} sampled texts "
              f"({ratio:.2f}× the ~4-characters heuristic)")
    return TokenCounter(ratio=ratio, per_message=PER_MESSAGE if per_message is None
                        else per_message, method=method, exact=exact)


def _tokenizer_name(model: Model) -> str:
    method = getattr(model, "token_count_method", "")
    return method if method and not method.startswith("estimate") else "the server's tokenizer"


__all__ = ["HEURISTIC", "SAMPLE", "measured_counter", "sample_texts", "template_tokens"]
