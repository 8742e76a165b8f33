"""The model protocol: the `Model` interface every backend in `mindprobe.models` implements.
What it is asked and answers (`Request`, `Completion`, ...) lives in `core.model_io` and is
re-exported here, the protocol's one import path."""

from __future__ import annotations

import abc
from typing import Any

from mindprobe.core.model_io import (
    NO_REASONING,
    REASONING_EFFORTS,
    CallContext,
    ChoiceScores,
    Completion,
    Reasoning,
    Request,
    TransientError,
    Usage,
    split_reasoning,
)

__all__ = [
    "FREE_TEXT", "NO_REASONING", "REASONING_EFFORTS", "CallContext", "ChoiceScores", "Completion",
    "Model", "Reasoning", "Request", "TransientError", "Usage", "split_reasoning",
]


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

    def take_notes(self) -> list[str]:
        """What the run should tell the user once the model has started (a capability its
        server turned out to lack, and what that changes), handed over and forgotten."""
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
