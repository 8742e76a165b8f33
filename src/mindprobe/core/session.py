"""A Session is one item's line to the model(s): caching, usage accounting and KV slots.

Benchmarks call `session.generate(...)`; everything that is not about the benchmark (which
backend, whether the answer is already cached, which llama.cpp slot keeps this conversation's
prefix) is decided here, once, for all of them.
"""

from __future__ import annotations

from typing import Any

from mindprobe.core.cache import ResponseCache, cache_key
from mindprobe.models.base import CallContext, Completion, Model, Request, Usage


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
        prompting: str = "basic",
    ) -> None:
        self._models = models
        self.item_id = item_id
        self._seed = seed
        self._cache = cache
        self._identities = identities
        #: The run's benchmark config and prompting label (so episodes need no globals).
        self.config = config or {}
        self.prompting = prompting
        self._calls = 0
        self._slots: dict[str, int] = {}
        self.usage: dict[str, Usage] = {}
        self.latency = 0.0

    @property
    def roles(self) -> list[str]:
        return list(self._models)

    def model(self, role: str = "model") -> Model:
        return self._models[role]

    async def generate(self, request: Request, role: str = "model") -> Completion:
        """Send one request (from cache when allowed); account its tokens under `role`."""
        model = self._models[role]
        usage = self.usage.get(role)
        if usage is None:
            usage = self.usage[role] = Usage()
        key = None
        if self._cache is not None and model.cacheable and request.temperature == 0:
            key = cache_key(self._identities[role], model.cache_payload(request))
            hit = self._cache.get(key)
            if hit is not None:
                usage.cache_hits += 1
                return Completion.from_cached(hit)
        if model.supports_slots and role not in self._slots:
            self._slots[role] = await model.acquire_slot()
        if model.supports_slots:
            request.slot = self._slots[role]
        ctx = CallContext(self.item_id, self._calls, self._seed, role)
        self._calls += 1
        comp = await model.complete(request, ctx)
        usage.requests += 1
        usage.prompt_tokens += comp.prompt_tokens
        usage.cached_prompt_tokens += comp.cached_prompt_tokens
        usage.completion_tokens += comp.completion_tokens
        self.latency += comp.latency
        if key is not None:
            self._cache.put(key, comp.to_cache())
        return comp

    def release(self) -> None:
        """Give back KV slots: the conversation is over."""
        for role, slot in self._slots.items():
            self._models[role].release_slot(slot)
        self._slots.clear()

    def usage_dict(self) -> dict[str, dict[str, int]]:
        return {role: u.as_dict() for role, u in self.usage.items()}
