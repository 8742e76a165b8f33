"""A Session is one item's line to the model(s): caching, usage accounting, KV slots, chats
and shared resources.

Benchmarks call `session.generate(...)`, `session.chat(...)` or `session.score_choices(...)`;
everything that is not about the benchmark (which backend, whether the answer is already
cached, which llama.cpp slot keeps this conversation's prefix) is decided here, once.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

from mindprobe.core.cache import ResponseCache, cache_key
from mindprobe.core.chat import Chat
from mindprobe.core.fit import check_fits
from mindprobe.core.model import CallContext, ChoiceScores, Completion, Model, Request, Usage
from mindprobe.core.requests import CallLog, TextStore, call_of
from mindprobe.core.secrets import redact_value
from mindprobe.errors import ModelError, UsageError

#: Seconds a run of items keeps a contended slot after the first of its items that took it
#: ended: long enough for the group's next items to use the prefix that first one prefilled
#: (a SORT excerpt: its questions then take a second or so each), short enough that the
#: benchmarks of a profile on one slot take turns every half minute or so.
SLOT_QUANTUM = 30.0


class SlotLease:
    """The KV slots of a run of items played back to back (one prefix group's, or one item's):
    each role's slot is taken at its first request, with the group as a hint, and given back
    when the run of items is over, so the group's shared prefix stays in one slot's cache.
    When other items wait for a slot, the run hands it over between its items once it has
    held it SLOT_QUANTUM seconds past its first item there (`between_items`), and takes one
    again, in arrival order, at its next request; a worker playing items of no group one by
    one carries its lease from item to item for the quantum (`keep`). So runs sharing one
    slot (the benchmarks of a profile on the embedded model) take turns of about a quantum
    each, in the order they asked."""

    def __init__(self, models: dict[str, Model], group: str | None = None) -> None:
        self._models = models
        self.group = group
        self._slots: dict[str, int] = {}
        self._turn_start: float | None = None  # the first item on these slots ended

    def between_items(self) -> None:
        """After an item of the run: give contended slots back once the quantum is spent."""
        if not self._slots:
            return
        now = time.monotonic()
        if self._turn_start is None:
            self._turn_start = now
            return
        if now - self._turn_start < SLOT_QUANTUM:
            return
        for role in [r for r in self._slots if self._models[r].slots_contended()]:
            self._models[role].release_slot(self._slots.pop(role))
        if not self._slots:
            self._turn_start = None

    def keep(self) -> bool:
        """Whether a worker may carry these slots on to its next run of plain items: items
        wait for them and the quantum is not spent (so a benchmark of single items keeps
        its turn for a quantum too). Where nobody waits, giving them back costs nothing and
        lets a router balance its endpoints."""
        if not self._slots or self._turn_start is None:
            return False
        if time.monotonic() - self._turn_start >= SLOT_QUANTUM:
            return False
        return any(self._models[r].slots_contended() for r in self._slots)

    async def slot(self, role: str) -> int:
        if role not in self._slots:
            self._slots[role] = await self._models[role].acquire_slot(self.group)
        return self._slots[role]

    def release(self) -> None:
        for role, slot in self._slots.items():
            self._models[role].release_slot(slot)
        self._slots.clear()


class Session:
    def __init__(
        self,
        models: dict[str, Model],
        item_id: str,
        *,
        seed: int,
        cache: ResponseCache | None,
        identities: dict[str, dict[str, Any]],
        config: dict[str, Any] | None = None,
        options: Any = None,
        prompting: str = "basic",
        resources: dict[str, Any] | None = None,
        on_usage: Callable[[int, int, int], None] | None = None,
        usage_role: str = "model",
        texts: TextStore | None = None,
        lease: SlotLease | None = None,
        on_reply: Callable[[], None] | None = None,
    ) -> None:
        self._models = models
        self.item_id = item_id
        self._seed = seed
        self._cache = cache
        self._identities = identities
        #: The run's typed benchmark options, what the benchmark derived from them while
        #: planning (`RunPlan.config`) and its prompting label (so episodes need no globals).
        self.options = options
        self.config = config or {}
        self.prompting = prompting
        self._resources = resources or {}
        self._on_usage = on_usage
        self._usage_role = usage_role
        self._calls = 0
        #: Slots come from the runner's lease (shared by a prefix group's items), else our own.
        self._own_lease = lease is None
        self._lease = SlotLease(models) if lease is None else lease
        #: Told when a model answered (the runner then lets the item's prefix group fan out).
        self._on_reply = on_reply
        self.usage: dict[str, Usage] = {}
        self.latency = 0.0
        #: Every call this item made (what was sent, what came back), for its record.
        self.sent = CallLog()
        self._texts = texts
        self._shared: list[str] = []
        #: Why a reply of this item held no text (`Completion.invalid`), for its record.
        self.invalid_reply: str | None = None

    @property
    def roles(self) -> list[str]:
        return list(self._models)

    def model(self, role: str = "model") -> Model:
        return self._models[role]

    def resource(self, name: str) -> Any:
        """A shared service the run started (e.g. the Wikipedia client)."""
        try:
            return self._resources[name]
        except KeyError:
            raise UsageError(f"this run has no resource {name!r}") from None

    def take_request(self, role: str | None = None) -> tuple[Any, Any]:
        """(request, reply) of the calls made since the last take, as records store them
        (`core.requests`): a chat stores each turn's under that turn, the runner stores
        what is left under the record's `request` and `reply`."""
        request, reply = self.sent.take(role)
        if request is not None and self._texts is not None:
            request = self._texts.share(request, tuple(self._shared))
        return request, reply

    def share_text(self, text: str) -> None:
        """Name a long text this item sends inside a message and other items send too (an
        excerpt several questions quote): records then store it once per run."""
        self._shared.append(text)

    def chat(self, system: str | None = None, role: str = "model") -> Chat:
        """A conversation with one model: `await chat.ask(text)` appends both turns."""
        return Chat(self, role, system)

    def _usage(self, role: str) -> Usage:
        usage = self.usage.get(role)
        if usage is None:
            usage = self.usage[role] = Usage()
        return usage


    def _account(self, role: str, comp: Completion, requests: int = 1) -> None:
        usage = self._usage(role)
        usage.requests += requests
        usage.prompt_tokens += comp.prompt_tokens
        usage.cached_prompt_tokens += comp.cached_prompt_tokens
        usage.completion_tokens += comp.completion_tokens
        usage.reasoning_tokens += comp.reasoning_tokens
        self.latency += comp.latency
        if self._on_usage is not None and role == self._usage_role:
            self._on_usage(comp.prompt_tokens, comp.cached_prompt_tokens, comp.completion_tokens)

    def _context(self, role: str) -> CallContext:
        ctx = CallContext(self.item_id, self._calls, self._seed, role)
        self._calls += 1
        return ctx

    async def generate(self, request: Request, role: str = "model") -> Completion:
        """Send one request (from cache when allowed); account its tokens under `role`. One
        that cannot fit the model's context window raises DoesNotFit and is never sent."""
        model = self._models[role]
        await check_fits(model, request)
        key = None
        if self._cache is not None and model.cacheable and request.temperature == 0:
            key = cache_key(self._identities[role], model.cache_payload(request))
            hit = self._cache.get(key)
            if hit is not None:
                self._usage(role).cache_hits += 1
                comp = Completion.from_cached(hit)
                self.sent.add(role, call_of(request), comp.text)
                return comp
        if model.supports_slots:
            request.slot = await self._lease.slot(role)
        comp = _masked(await model.complete(request, self._context(role)))
        self.sent.add(role, call_of(request), comp.text)
        self._account(role, comp, requests=comp.requests)
        if self._on_reply is not None:
            self._on_reply()
        if comp.invalid is not None:  # scored as an invalid answer; asked again next run
            self.invalid_reply = self.invalid_reply or comp.invalid
            return comp
        if request.constrain and request.choices:
            check_constrained(model, request.choices, comp)
        if key is not None:
            self._cache.put(key, comp.to_cache())
        return comp

    async def score_choices(self, request: Request, candidates: list[str],
                            role: str = "model") -> ChoiceScores:
        """Log-probabilities of each candidate continuing `request` (cached like replies)."""
        model = self._models[role]
        if not model.can("logprobs"):
            raise UsageError(
                f"{model.spec} cannot return log-probabilities; use a backend that can "
                "(local, or an OpenAI-compatible server with logprobs) or answer by text"
            )
        await check_fits(model, request, budget=1)
        key = None
        if self._cache is not None and model.cacheable:
            payload = {"score_choices": candidates, "method": model.score_method,
                       **model.cache_payload(request)}
            key = cache_key(self._identities[role], payload)
            hit = self._cache.get(key)
            if hit is not None:
                self._usage(role).cache_hits += 1
                self.sent.add(role, call_of(request, score=list(candidates)), None)
                return ChoiceScores.from_dict(hit)
        self.sent.add(role, call_of(request, score=list(candidates)), None)
        if model.supports_slots:
            request.slot = await self._lease.slot(role)
        scores = await model.score_choices(request, candidates, self._context(role))
        self._account(role, scores.cost, requests=scores.requests)
        if self._on_reply is not None:
            self._on_reply()
        if key is not None:
            self._cache.put(key, scores.as_dict())
        return scores

    def release(self) -> None:
        """Give back KV slots: the conversation is over (a shared lease: its owner does)."""
        if self._own_lease:
            self._lease.release()

    def usage_dict(self) -> dict[str, dict[str, int]]:
        return {role: u.as_dict() for role, u in self.usage.items()}


def _masked(comp: Completion) -> Completion:
    """A reply with the secrets this process sent masked (a server that echoes its
    `Authorization` header), before anything parses, records, caches or sends it on (a chat's
    next turn): a run served from the cache then sees exactly what a live one saw."""
    text, reasoning = redact_value(comp.text), redact_value(comp.reasoning)
    if text is comp.text and reasoning is comp.reasoning:
        return comp
    return dataclasses.replace(comp, text=text, reasoning=reasoning)


def check_constrained(model: Model, choices: list[str], comp: Completion) -> None:
    """A constrained request must come back as one of `choices`: anything else means the
    backend ignored the constraint, and scoring such replies as invalid answers would pass off
    an unconstrained run as a constrained one. A reply cut by the token cap, or an empty one (a
    refusal), says nothing about the constraint and is scored as it is."""
    text = comp.text.strip()
    if not text or text in choices or comp.finish_reason == "length":
        return
    shown = ", ".join(repr(c) for c in choices[:6]) + (", …" if len(choices) > 6 else "")
    raise ModelError(
        f"{model.spec} did not enforce the constrained answer: asked for one of {shown}, it "
        f"replied {comp.text[:80]!r}. Its server ignores the constraint it was sent; use "
        "unconstrained prompting with it (finished records are kept)"
    )
