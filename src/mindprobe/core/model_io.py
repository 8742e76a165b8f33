"""What a benchmark asks (`Request`) and a backend answers (`Completion`, `ChoiceScores`,
`Usage`): plain values, apart from the `Model` interface so either can be read alone."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mindprobe.errors import ModelError


@dataclass(slots=True)
class Request:
    """What a benchmark asks for. Either `messages` (chat) or `prompt` (raw completion).

    `choices` is the closed answer set when one exists: the random model samples from it and,
    when `constrain` is set, grammar-capable backends enforce it. `slot` is filled by the
    session so a multi-turn conversation keeps one KV-cache slot on prefix-caching backends.
    `human_hint`/`human_wrap` only affect the `human` model (how a typed line becomes a reply,
    e.g. `y` -> `[answer: yes]`).
    """

    messages: list[dict[str, str]] | None = None
    prompt: str | None = None
    max_tokens: int = 256
    temperature: float = 0.0
    stop: list[str] | None = None
    seed: int | None = None
    choices: list[str] | None = None
    constrain: bool = False
    logprobs: int | None = None
    extra: dict[str, Any] | None = None
    slot: int | None = None
    #: The last message is a partial assistant turn to continue (e.g. "Answer: Segment").
    continue_final: bool = False
    human_hint: str | None = None
    human_wrap: Callable[[str], str] | None = None
    #: How hard a reasoning model should think (`low`/`medium`/`high`; OpenAI
    #: `reasoning_effort`); None: the backend's default (or the model's run-wide setting).
    reasoning_effort: str | None = None
    #: Where the answer is complete, for base models on the completion path (a llama.cpp
    #: engine serving a model without a chat template of its own): stages the reply passes in
    #: order, each ending at the first of its stop strings, generation stopping at the end of
    #: the last (`(("]", "\n"),)`: the close of `[answer: ...]` or the end of the line).
    #: Chat models never see it: their requests stay upstream's.
    answer_end: tuple[tuple[str, ...], ...] | None = None
    #: With `answer_end`: a regular expression (the benchmark's own answer parser) the reply
    #: must match before the last stage's stop ends it; a stop reached before that (a `]` of
    #: some other bracket) continues the reply, so stopping never changes what is parsed.
    answer_pattern: str | None = None

    def wire_text(self) -> str:
        """The text the model sees last (for displays and simple responders)."""
        if self.prompt is not None:
            return self.prompt
        return self.messages[-1]["content"] if self.messages else ""


REASONING_EFFORTS = ("low", "medium", "high")


@dataclass(frozen=True)
class Reasoning:
    """Run-wide reasoning settings (`--reasoning-effort` / `--reasoning`, or `evaluate()`'s
    parameters): the effort sent with every request, and "this model thinks" (room for its
    thinking from the first request). A parameter of the backend, never the environment."""

    effort: str | None = None
    thinks: bool = False

    @classmethod
    def of(cls, effort: str | None = None, thinks: bool = False) -> Reasoning:
        """Checked settings; an unknown effort is refused, not ignored. An effort implies
        that the model thinks."""
        effort = (effort or "").strip().lower() or None
        if effort is not None and effort not in REASONING_EFFORTS:
            raise ModelError(f"reasoning effort {effort!r}: expected one of "
                             f"{', '.join(REASONING_EFFORTS)}")
        return cls(effort, bool(thinks) or effort is not None)


NO_REASONING = Reasoning()


@dataclass(slots=True)
class Usage:
    """Token accounting; `cached_prompt_tokens` are prompt tokens the backend did not recompute.

    `reasoning_tokens` are the part of `completion_tokens` a reasoning model spent thinking, as
    the backend reports it (`usage.completion_tokens_details.reasoning_tokens`); 0 when the
    backend does not say (the thinking is then still inside `completion_tokens`).
    """

    requests: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    cached_prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0

    def add(self, other: Usage) -> None:
        self.requests += other.requests
        self.cache_hits += other.cache_hits
        self.prompt_tokens += other.prompt_tokens
        self.cached_prompt_tokens += other.cached_prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.reasoning_tokens += other.reasoning_tokens

    def as_dict(self) -> dict[str, int]:
        return {
            "requests": self.requests,
            "cache_hits": self.cache_hits,
            "prompt_tokens": self.prompt_tokens,
            "cached_prompt_tokens": self.cached_prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "reasoning_tokens": self.reasoning_tokens,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> Usage:
        d = d or {}
        return cls(**{k: int(d.get(k, 0) or 0) for k in cls.__slots__})


_THINK_OPEN, _THINK_CLOSE = "<think>", "</think>"


def split_reasoning(text: str) -> tuple[str | None, str, bool]:
    """(reasoning, answer, unclosed) of a reply that may begin with a `<think>…</think>` block.

    Reasoning models served without a reasoning parser write their thinking into the text:
    either a leading `<think>…</think>` block, or (when the chat template already opened the
    block, as DeepSeek-R1's does) the thinking followed by a lone `</think>`. The answer is
    what follows the block. `unclosed`: a `<think>` that never closes (the reply ended while
    the model was still thinking; the answer is then empty). A text without such a block is
    returned unchanged with reasoning None."""
    head = text.lstrip()
    if head.startswith(_THINK_OPEN):
        inner = head[len(_THINK_OPEN):]
        end = inner.find(_THINK_CLOSE)
        if end < 0:
            return inner.strip(), "", True
        return inner[:end].strip(), inner[end + len(_THINK_CLOSE):].lstrip(), False
    end = text.find(_THINK_CLOSE)
    if end >= 0 and _THINK_OPEN not in text[:end]:
        return text[:end].strip(), text[end + len(_THINK_CLOSE):].lstrip(), False
    return None, text, False


@dataclass(slots=True)
class Completion:
    """A model's answer plus what it cost; `raw` is the backend's JSON (kept for the record).

    `text` is the answer only: a reasoning model's thinking (the backend's `reasoning_content`,
    or a `<think>…</think>` block at the start of the text) is in `reasoning`, never in `text`,
    so parsing, chat histories and judges see only the answer. `truncated_in_reasoning`: the
    reply was cut off (finish_reason "length") while the model was still thinking, so it holds
    no answer at all (not the same as a wrong or malformed answer)."""

    text: str
    prompt_tokens: int = 0
    cached_prompt_tokens: int = 0
    completion_tokens: int = 0
    latency: float = 0.0
    finish_reason: str | None = None
    logprobs: list[dict[str, Any]] | None = None
    raw: dict[str, Any] | None = None
    from_cache: bool = False
    reasoning: str | None = None
    reasoning_tokens: int = 0
    truncated_in_reasoning: bool = False
    #: Requests the reply took (a base model's reply generated in stages: one per stage).
    requests: int = 1
    #: Why the reply holds no text although the server answered (its content was of no
    #: legal form: an integer, an object): scored as an invalid answer, never cached.
    invalid: str | None = None

    def to_cache(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "prompt_tokens": self.prompt_tokens,
            "cached_prompt_tokens": self.cached_prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "finish_reason": self.finish_reason,
            "logprobs": self.logprobs,
            "reasoning": self.reasoning,
            "reasoning_tokens": self.reasoning_tokens,
            "truncated_in_reasoning": self.truncated_in_reasoning,
        }

    @classmethod
    def from_cached(cls, d: dict[str, Any]) -> Completion:
        text, reasoning = d["text"], d.get("reasoning")
        truncated = bool(d.get("truncated_in_reasoning"))
        if "reasoning" not in d:  # cached before reasoning was split off: split it now
            reasoning, text, unclosed = split_reasoning(text)
            truncated = unclosed and d.get("finish_reason") == "length"
        return cls(
            text=text,
            prompt_tokens=d.get("prompt_tokens", 0),
            cached_prompt_tokens=d.get("cached_prompt_tokens", 0),
            completion_tokens=d.get("completion_tokens", 0),
            finish_reason=d.get("finish_reason"),
            logprobs=d.get("logprobs"),
            from_cache=True,
            reasoning=reasoning,
            reasoning_tokens=int(d.get("reasoning_tokens") or 0),
            truncated_in_reasoning=truncated,
        )


class TransientError(Exception):
    """A request failed after all retries; the item is recorded with this error, the run goes on.

    `kind` is "connection" when the server could not be reached at all (the runner stops a run
    whose server died instead of failing every remaining item slowly)."""

    def __init__(self, message: str, kind: str = "other") -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class ChoiceScores:
    """Log-probabilities of closed-set candidates continuing one request.

    `first`: log-prob of each candidate's first token; `full`: of the whole candidate (None where
    the backend cannot tell); `top`: the first position's top-k alternatives as returned, so
    benchmarks with their own rule (SORT §4.3) can apply it; `method` names how they were got.
    """

    candidates: list[str]
    first: list[float | None]
    full: list[float | None]
    top: dict[str, float] | None = None
    method: str = ""
    requests: int = 1
    cost: Completion = field(default_factory=lambda: Completion(""))

    def best(self) -> str | None:
        """The candidate with the highest full (else first-token) log-prob; None if none known."""
        vals = [f if f is not None else p for f, p in zip(self.full, self.first, strict=True)]
        known = [(v, i) for i, v in enumerate(vals) if v is not None]
        if not known:
            return None
        return self.candidates[max(known, key=lambda t: (t[0], -t[1]))[1]]

    def as_dict(self) -> dict[str, Any]:
        return {"candidates": self.candidates, "first": self.first, "full": self.full,
                "top": self.top, "method": self.method, "requests": self.requests}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ChoiceScores:
        return cls(d["candidates"], d["first"], d["full"], d.get("top"), d.get("method", ""),
                   d.get("requests", 1))


@dataclass
class CallContext:
    """Who is asking: lets stateless backends (random) be deterministic per item and call."""

    item_id: str
    call_index: int
    seed: int
    role: str = "model"
