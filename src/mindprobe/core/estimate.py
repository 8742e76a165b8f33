"""Token estimates without sending a request (`run --dry-run`, the profile plan).

Tokens are counted as ~4 characters each (plus a few per message for the chat template),
unless a plan measured better: the `TokenCounter` in force scales the heuristic by the ratio
the model's own tokenizer gave on a sample of the planned texts, and takes the template's
tokens per message from the model (`profiling.tokens`). Prefix reuse is measured on the
prompts in run order: what a prompt shares with the one before it (a Book-SORT excerpt asked
about again, the same instructions) is not prefilled again.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

#: Chat-template tokens per message (role markers, separators), roughly.
PER_MESSAGE = 4
HEURISTIC = "heuristic: ~4 characters per token"


@dataclass
class TokenCounter:
    """How estimates count tokens: ~4 characters per token times `ratio` (measured on sampled
    texts with the model's tokenizer, 1 without one), `per_message` for the chat template; with
    `seen`, every text counted is kept (the population the sample is drawn from)."""

    ratio: float = 1.0
    per_message: float = PER_MESSAGE
    method: str = HEURISTIC
    seen: list[str] | None = None

    def text(self, text: str, sample: bool = True) -> int:
        if self.seen is not None and sample and text:
            self.seen.append(text)
        return max(1, round(len(text) / 4 * self.ratio)) if text else 0


_HEURISTIC_COUNTER = TokenCounter()
_COUNTER: ContextVar[TokenCounter | None] = ContextVar("token_counter", default=None)


@contextlib.contextmanager
def counting(counter: TokenCounter) -> Iterator[TokenCounter]:
    """Estimates made inside count with `counter`."""
    token = _COUNTER.set(counter)
    try:
        yield counter
    finally:
        _COUNTER.reset(token)


def text_tokens(text: str, sample: bool = True) -> int:
    """Tokens of `text` by the counter in force (`sample`: a text a prompt is made of, not a
    part of one such as a shared prefix)."""
    return (_COUNTER.get() or _HEURISTIC_COUNTER).text(text, sample)


def message_tokens(n: int) -> int:
    """Chat-template tokens of `n` messages by the counter in force."""
    return round((_COUNTER.get() or _HEURISTIC_COUNTER).per_message * n)


def prompt_text(messages: list[dict[str, Any]]) -> str:
    return "\n".join(str(m.get("content") or "") for m in messages)


def single_request_estimate(prompts: Iterable[list[dict[str, Any]]], completion_expected: float,
                            completion_max: int, requests_per_item: int = 1,
                            note: str = "") -> dict[str, Any]:
    """Totals over items of one request each, expected; the bound allows `requests_per_item`
    (re-asks of an invalid answer, each re-sending the prompt) and full-length replies."""
    prompt = prefill = n = 0
    previous = ""
    for messages in prompts:
        text = prompt_text(messages)
        tokens = text_tokens(text) + message_tokens(len(messages))
        shared = text_tokens(os.path.commonprefix([previous, text]), sample=False) \
            if previous else 0
        prompt += tokens
        prefill += tokens - shared
        previous = text
        n += 1
    requests = n * requests_per_item
    again = (requests_per_item - 1) * completion_max  # a re-ask re-sends the reply too
    return {"requests": requests, "prompt_tokens": prompt * requests_per_item + n * again,
            "prefill_tokens": prefill + n * again,
            "completion_tokens": requests * completion_max,
            "expected_completion_tokens": round(n * min(completion_expected,
                                                        completion_max)),
            "expected_prompt_tokens": prompt, "expected_prefill_tokens": prefill,
            "expected_requests": n, "note": note}


def estimate_results(name: str, est: dict[str, Any]) -> Any:
    """The estimate as Results (its `detail["estimate"]` is what dry runs read)."""
    import pandas as pd

    from mindprobe.core.results import Results

    res = Results(name, detail={"estimate": est})
    res.add_table("estimate", pd.DataFrame([{k: v for k, v in est.items() if k != "note"}]),
                  f"estimate ({est.get('note') or HEURISTIC})", index=False)
    return res
