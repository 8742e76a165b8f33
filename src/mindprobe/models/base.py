"""One async interface in front of every backend, so benchmarks never know what answers them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


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
    human_hint: str | None = None
    human_wrap: Callable[[str], str] | None = None

    def wire_text(self) -> str:
        """The text the model sees last (for displays and simple responders)."""
        if self.prompt is not None:
            return self.prompt
        return self.messages[-1]["content"] if self.messages else ""


@dataclass(slots=True)
class Usage:
    """Token accounting; `cached_prompt_tokens` are prompt tokens the backend did not recompute."""

    requests: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    cached_prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, other: Usage) -> None:
        self.requests += other.requests
        self.cache_hits += other.cache_hits
        self.prompt_tokens += other.prompt_tokens
        self.cached_prompt_tokens += other.cached_prompt_tokens
        self.completion_tokens += other.completion_tokens

    def as_dict(self) -> dict[str, int]:
        return {
            "requests": self.requests,
            "cache_hits": self.cache_hits,
            "prompt_tokens": self.prompt_tokens,
            "cached_prompt_tokens": self.cached_prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> Usage:
        d = d or {}
        return cls(**{k: int(d.get(k, 0) or 0) for k in cls.__slots__})


@dataclass(slots=True)
class Completion:
    """A model's answer plus what it cost; `raw` is the backend's JSON (kept for the record)."""

    text: str
    prompt_tokens: int = 0
    cached_prompt_tokens: int = 0
    completion_tokens: int = 0
    latency: float = 0.0
    finish_reason: str | None = None
    logprobs: list[dict[str, Any]] | None = None
    raw: dict[str, Any] | None = None
    from_cache: bool = False

    def to_cache(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "prompt_tokens": self.prompt_tokens,
            "cached_prompt_tokens": self.cached_prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "finish_reason": self.finish_reason,
            "logprobs": self.logprobs,
        }

    @classmethod
    def from_cached(cls, d: dict[str, Any]) -> Completion:
        return cls(
            text=d["text"],
            prompt_tokens=d.get("prompt_tokens", 0),
            cached_prompt_tokens=d.get("cached_prompt_tokens", 0),
            completion_tokens=d.get("completion_tokens", 0),
            finish_reason=d.get("finish_reason"),
            logprobs=d.get("logprobs"),
            from_cache=True,
        )


class TransientError(Exception):
    """A request failed after all retries; the item is recorded with this error, the run goes on."""


@dataclass
class CallContext:
    """Who is asking: lets stateless backends (random) be deterministic per item and call."""

    item_id: str
    call_index: int
    seed: int
    role: str = "model"


class Model:
    """Base class for backends. Subclasses implement `complete`; the rest has safe defaults."""

    spec: str = ""
    #: Short name used in run directory names, e.g. `gpt-4o-mini` or `random`.
    label: str = "model"
    #: Whether responses may be cached (deterministic remote models: yes; random/human: no).
    cacheable: bool = True
    supports_grammar: bool = False
    supports_slots: bool = False
    default_concurrency: int = 8
    interactive: bool = False

    async def start(self) -> None:
        """Open connections / start servers; called once before the first request."""

    async def close(self) -> None:
        """Release everything `start` acquired."""

    def identity(self) -> dict[str, Any]:
        """What makes two responses interchangeable (for the cache); never contains secrets."""
        return {"spec": self.spec}

    def cache_payload(self, request: Request) -> dict[str, Any]:
        """The request as the backend would send it, minus fields that do not change the answer."""
        return {
            "messages": request.messages,
            "prompt": request.prompt,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stop": request.stop,
            "seed": request.seed,
            "choices": request.choices if request.constrain else None,
            "logprobs": request.logprobs,
            "extra": request.extra,
        }

    async def complete(self, request: Request, ctx: CallContext) -> Completion:
        raise TypeError(f"{type(self).__name__} does not implement complete()")

    async def acquire_slot(self) -> int:
        """Slot-capable backends hand out one KV-cache slot per live conversation."""
        return 0

    def release_slot(self, slot: int) -> None:
        """Return a slot taken with `acquire_slot`."""

    def configure(self, concurrency: int) -> None:
        """Told the run's concurrency before `start` (the local server sizes its slots by it)."""

    def describe(self) -> dict[str, Any]:
        """Manifest entry for this model: spec and identity, no secrets."""
        return {"spec": self.spec, "label": self.label, "identity": self.identity()}
