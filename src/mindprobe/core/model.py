"""The model protocol: what benchmarks ask (`Request`) and backends answer (`Completion`,
`ChoiceScores`, `Usage`), and the `Model` interface every backend in `mindprobe.models` implements."""

from __future__ import annotations

import abc
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


#: The capability of answering in free text (every backend but the random baseline).
FREE_TEXT = "free_text"


class Model(abc.ABC):
    """Base class for backends. Subclasses implement `complete` and declare what else they can
    do in one set, `capabilities`; the rest has safe defaults."""

    spec: str = ""
    #: Short name used in run directory names, e.g. `gpt-4o-mini` or `random`.
    label: str = "model"
    #: Whether responses may be cached (deterministic remote models: yes; random/human: no).
    cacheable: bool = True
    supports_slots: bool = False
    default_concurrency: int = 8
    interactive: bool = False
    #: What this backend can do beyond plain replies: "logprobs" (score_choices), "prefix"
    #: (continue an assistant turn), "tokenize" (count_tokens and tokenize with the model's own
    #: tokenizer), "template" (apply_template: the model's chat template as text), "grammar"
    #: (constrained answers), "base" (a base model completing text: generation stops at a
    #: request's `answer_end`; benchmarks answer it by log-probability or completion), "chat"
    #: (an instruct model with a chat template: benchmarks use the paper's chat protocol).
    #: Recorded in each manifest. Benchmarks choose their protocol by these, never by the spec.
    capabilities: frozenset[str] = frozenset()
    #: Why the model is "base" or "chat", in the words a benchmark repeats when it picks its
    #: protocol (e.g. "no chat template in the GGUF: a base model"); recorded in the manifest.
    protocol_reason: str = ""
    #: Tokens the model can attend to per conversation (None: unknown), and where that was
    #: learnt (`set_context_window`): items that cannot fit it are never sent.
    context_window: int | None = None
    context_window_source: str | None = None
    _window_fixed: bool = False
    #: How score_choices computes log-probs: part of its cache key, so a changed method is
    #: never answered from entries of the old one.
    score_method: str = "none"
    #: How score_choices asks, for estimates made before it runs: "one" request per question,
    #: or "per-token" (one per candidate token, the prompt re-read from the server's cache).
    score_requests: str = "one"
    #: How count_tokens counts, named in results that depend on it.
    token_count_method: str = "estimate: 4 characters per token"
    at_chance: bool = False  #: the chance baseline: uniform among the allowed answers

    #: Starting it loads a model (the embedded engine, replicas it launches): a re-run with
    #: nothing left to ask does not start it. A server's client starts in one request, and is
    #: started even then: what the server says it serves is part of the run's identity.
    heavy_start: bool = False
    #: Whether it answers in free text; False for a backend that only picks from a request's
    #: closed answer set (`Request.choices`: the random baseline). Plans that need it require
    #: FREE_TEXT, so a profile or run says so before anything starts.
    free_text: bool = True

    def set_context_window(self, tokens: Any, source: str, fixed: bool = False) -> None:
        """Learn the window from `source` (a server's /props, its model card, the GGUF): a
        whole number of tokens in 16..2^31, else it stays unknown. `fixed` (the user's
        `--context-window`) is kept whatever a backend reports later."""
        if self._window_fixed or isinstance(tokens, bool) or not isinstance(tokens, int) \
                or not 16 <= tokens < 2**31:
            return
        self.context_window, self.context_window_source = tokens, source
        self._window_fixed = fixed

    def can(self, capability: str) -> bool:
        return capability in self.capabilities or (capability == FREE_TEXT and self.free_text)

    @property
    def supports_grammar(self) -> bool:
        """Constrained answers: the "grammar" capability (never declared apart from it)."""
        return "grammar" in self.capabilities

    def deterministic(self, concurrency: int) -> bool | None:
        """Whether a run at `concurrency` gives the same answers every time (recorded in the
        manifest). None: not ours to know (a remote server's batching decides)."""
        return not self.interactive

    async def count_tokens(self, messages: list[dict[str, str]] | str) -> int:
        """Prompt tokens of a conversation (or text); an estimate unless "tokenize" is declared."""
        text = messages if isinstance(messages, str) else "".join(
            m.get("content") or "" for m in messages)
        return max(1, (len(text) + 3) // 4) if text else 0

    async def count_text(self, text: str) -> int | None:
        """`text`'s tokens by the backend's own tokenizer, if it offers one (even without the
        "tokenize" capability: a server's tokenize endpoint), else None. Plans use it to
        count sampled prompts before a run; None: they count ~4 characters per token."""
        return None

    async def count_chat(self, messages: list[dict[str, str]]) -> int | None:
        """A conversation's tokens as the backend renders it (chat template included), or
        None (see `count_text`)."""
        return None

    async def score_choices(self, request: Request, candidates: list[str],
                            ctx: CallContext) -> ChoiceScores:
        raise TypeError(f"{type(self).__name__} cannot score choices")

    async def tokenize(self, text: str, add_special: bool = True) -> list[int]:
        """Token ids of `text` by the model's own tokenizer ("tokenize"), special tokens (BOS)
        added when `add_special`, as Hugging Face's `tokenizer.encode` does."""
        raise TypeError(f"{type(self).__name__} has no tokenizer to ask")

    async def apply_template(self, messages: list[dict[str, str]]) -> str:
        """The prompt text the model's chat template makes of `messages`, generation prompt
        included ("template"): what a benchmark extends to continue an assistant turn."""
        raise TypeError(f"{type(self).__name__} does not expose its chat template")

    async def start(self) -> None:  # noqa: B027 (optional: most backends need nothing)
        """Open connections / start servers; called once before the first request."""

    async def close(self) -> None:  # noqa: B027 (optional: most backends need nothing)
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
            # Only when set, so cache keys of requests without it stay what they were.
            **({"reasoning_effort": request.reasoning_effort} if request.reasoning_effort
               else {}),
            **({"answer_end": [list(stage) for stage in request.answer_end]}
               if request.answer_end and self.can("base") else {}),
            **({"answer_pattern": request.answer_pattern}
               if request.answer_end and request.answer_pattern and self.can("base") else {}),
        }

    @abc.abstractmethod
    async def complete(self, request: Request, ctx: CallContext) -> Completion:
        """One reply to `request` (retries are the backend's own business)."""

    def slots_contended(self) -> bool:
        """Whether items wait for a slot now (a run holding one then hands it over between
        its items, `core.session.SlotLease`); False where slots never run out."""
        return False

    async def acquire_slot(self, group: str | None = None) -> int:
        """Slot-capable backends hand out one KV-cache slot per live conversation; `group`
        (a prefix group) asks for the slot or server that last held that group's prefix."""
        return 0

    def release_slot(self, slot: int) -> None:  # noqa: B027 (optional: most backends need nothing)
        """Return a slot taken with `acquire_slot`."""

    def configure(self, concurrency: int) -> None:  # noqa: B027 (optional: most backends need nothing)
        """Told the run's concurrency before `start` (the local server sizes its slots by it)."""

    def take_warnings(self) -> list[str]:
        """What its replies held that a run should hear about once (usage it ignored,
        replies of no legal form), handed over and forgotten: one run's worth per call."""
        return []

    def endpoint_stats(self) -> list[dict[str, Any]]:
        """Per-endpoint requests, errors and throughput when several endpoints serve this model
        (the router); empty for single-endpoint backends."""
        return []

    def describe(self) -> dict[str, Any]:
        """Manifest entry for this model: spec, identity and capabilities, no secrets."""
        return {"spec": self.spec, "label": self.label, "identity": self.identity(),
                "capabilities": sorted(self.capabilities), "context_window": self.context_window,
                "context_window_source": self.context_window_source,
                "token_count_method": self.token_count_method, "protocol": self.protocol()}

    def protocol(self) -> dict[str, str]:
        """Which protocol benchmarks give this model and why: "base" (log-probability or
        completion), "chat" (the paper's chat requests), "closed" (a backend that only picks
        from a closed answer set)."""
        kind = ("base" if "base" in self.capabilities else "closed" if not self.free_text
                else "chat")
        return {"kind": kind, "why": self.protocol_reason or (
            "a chat endpoint" if kind == "chat" else "declared by the backend")}
