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
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
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
    #: Short texts counted on their own (candidate answers), by the model's tokenizer where
    #: measured; while recording, `pieces` collects them (a handful of distinct ones).
    exact: dict[str, int] = field(default_factory=dict)
    pieces: set[str] | None = None

    def text(self, text: str, sample: bool = True) -> int:
        if self.seen is not None and sample and text:
            self.seen.append(text)
        return max(1, round(len(text) / 4 * self.ratio)) if text else 0

    def piece(self, text: str) -> int:
        if self.pieces is not None:
            self.pieces.add(text)
        return self.exact[text] if text in self.exact else self.text(text, sample=False)


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


def piece_tokens(text: str) -> int:
    """Tokens of a short text tokenized on its own (a candidate answer scored token by token):
    exact where the plan counted it with the model's tokenizer."""
    return (_COUNTER.get() or _HEURISTIC_COUNTER).piece(text)


def message_tokens(n: int) -> int:
    """Chat-template tokens of `n` messages by the counter in force."""
    return round((_COUNTER.get() or _HEURISTIC_COUNTER).per_message * n)


def prompt_text(messages: list[dict[str, Any]]) -> str:
    return "\n".join(str(m.get("content") or "") for m in messages)


def common_prefix_length(a: str, b: str) -> int:
    """The length of the longest common prefix of `a` and `b`, found by halving: each step
    compares two slices in C, where `os.path.commonprefix` walks the characters in Python (3 s
    over a quick profile's SORT prompts of 100,000 characters each)."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo] and a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def _prompt_totals(prompts: Iterable[list[dict[str, Any]]]) -> Iterator[tuple[int, int]]:
    """Each prompt's tokens and what of it is not shared with the one before (prefilled)."""
    previous = ""
    for messages in prompts:
        text = prompt_text(messages)
        tokens = text_tokens(text) + message_tokens(len(messages))
        shared = text_tokens(text[:common_prefix_length(previous, text)], sample=False) \
            if previous else 0
        previous = text
        yield tokens, tokens - shared


def single_request_estimate(prompts: Iterable[list[dict[str, Any]]], completion_expected: float,
                            completion_max: int, requests_per_item: int = 1,
                            note: str = "", stages: int = 1) -> dict[str, Any]:
    """Totals over items of one request each, expected; the bound allows `requests_per_item`
    (re-asks of an invalid answer, each re-sending the prompt) and full-length replies.

    `stages` > 1: the reply is generated in stages (a base model's `answer_end`, each stage
    ending at a stop string), each call re-sending the prompt and the reply so far, the slot
    holding both (prefilled: the stop word put back). Expected: each stage once, the reply
    re-sent at its expected length; bound: every stage stopped once too early (blank), the
    reply re-sent at its cap."""
    prompt = prefill = n = 0
    for tokens, fresh in _prompt_totals(prompts):
        prompt, prefill, n = prompt + tokens, prefill + fresh, n + 1
    reply = min(completion_expected, completion_max)
    if stages > 1:
        calls = 2 * stages
        return {"requests": n * calls, "prompt_tokens": prompt * calls
                + n * (calls - 1) * completion_max,
                "prefill_tokens": prefill + n * (calls - 1) * completion_max,
                "completion_tokens": n * completion_max,
                "expected_completion_tokens": round(n * reply),
                "expected_prompt_tokens": round(prompt * stages + n * (stages - 1) * reply),
                "expected_prefill_tokens": prefill + n * (stages - 1),
                "expected_requests": n * stages, "note": note}
    requests = n * requests_per_item
    again = (requests_per_item - 1) * completion_max  # a re-ask re-sends the reply too
    return {"requests": requests, "prompt_tokens": prompt * requests_per_item + n * again,
            "prefill_tokens": prefill + n * again,
            "completion_tokens": requests * completion_max,
            "expected_completion_tokens": round(n * reply),
            "expected_prompt_tokens": prompt, "expected_prefill_tokens": prefill,
            "expected_requests": n, "note": note}


def scoring_estimate(prompts: Iterable[tuple[list[dict[str, Any]], list[str]]],
                     score_requests: str, note: str = "") -> dict[str, Any]:
    """Log-probability scoring of candidate answers, as the model's `score_choices` asks
    (`Model.score_requests`): "one" one-token request per question; "per-token" one request
    per candidate token, the prompt and the candidate's tokens so far (the slot keeps the
    prompt: each later call prefills only the candidate's tokens, at least one)."""
    prompt = prefill = requests = 0
    for (tokens, fresh), candidates in _paired(prompts):
        if score_requests != "per-token":
            prompt, prefill, requests = prompt + tokens, prefill + fresh, requests + 1
            continue
        prefill += fresh
        first = True
        for cand in candidates:
            for k in range(piece_tokens(cand)):
                prompt += tokens + k
                prefill += 0 if first else max(1, k)
                requests, first = requests + 1, False
    return {"requests": requests, "prompt_tokens": prompt, "prefill_tokens": prefill,
            "completion_tokens": requests, "expected_requests": requests,
            "expected_prompt_tokens": prompt, "expected_prefill_tokens": prefill,
            "expected_completion_tokens": requests, "note": note}


def _paired(prompts: Iterable[tuple[list[dict[str, Any]], list[str]]]
            ) -> Iterator[tuple[tuple[int, int], list[str]]]:
    pairs = list(prompts)
    return zip(_prompt_totals(m for m, _ in pairs), (c for _, c in pairs), strict=True)


def estimate_results(name: str, est: dict[str, Any]) -> Any:
    """The estimate as Results (its `detail["estimate"]` is what dry runs read)."""
    from mindprobe.core.results import Results

    res = Results(name, detail={"estimate": est})
    res.add_table("estimate", [{k: v for k, v in est.items() if k != "note"}],
                  f"estimate ({est.get('note') or HEURISTIC})", index=False)
    return res
