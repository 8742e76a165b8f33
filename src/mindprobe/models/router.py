"""One model served by several endpoints: least-loaded routing, per-item affinity, failover.

How an endpoint is chosen:

* **Affinity.** The session of an item takes a slot once (`acquire_slot`) and gives it back at
  the end; the slot is a conversation id mapped to one endpoint, so every turn of a chat goes to
  the server that already holds its prefix in cache (and on llama.cpp servers to one KV slot).
  Items of one prefix group (they share a long prefix) go to the endpoint (and llama.cpp slot)
  that served the group last while it is up, has room and is no busier than the others.
* **Least loaded.** A new item goes to the healthy endpoint with the fewest live items per unit
  of capacity (`concurrency=N` in the endpoints file; else 1); ties go to the endpoint answering
  fastest lately, then round-robin. An endpoint at its `concurrency` cap takes no more items.
  Faster endpoints finish items sooner, so they get more of them.
* **Failover.** Each attempt goes to one endpoint only. A refused connection takes the endpoint
  out of rotation at once; timeouts, dropped connections and 5xx after three in a row. It
  cools down (1 s, 2 s, 4 s … up to 60 s, jittered) and is probed (`GET /models`) before it
  gets items again. The items it held move to a live endpoint on their next request (their
  prefix cache is lost, their answers are not). When every endpoint is down the pool is in an
  outage, judged by the one dead-server rule of every client (`core.retry.Liveness`): it starts
  with the failure that left no endpoint in rotation, goes on while probes fail, ends with any
  answer, and after `all_down_after` seconds the run stops with one ModelError (a restart is
  ridden out, however long the last generation took); nothing unanswered is recorded.

What makes two responses interchangeable is the model and the deployment, not which replica
answered: the cache key and the run directory use the model name and the endpoint group (a name
the user gives, `openai-compatible` by default), never the URLs, so endpoints can be added or
removed between runs and a resumed run continues the same records. Llama.cpp replicas started by
mindprobe have the identity of the embedded engine (GGUF sha256), the same as `local`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from mindprobe.core.model import (
    NO_REASONING,
    CallContext,
    ChoiceScores,
    Completion,
    Model,
    Reasoning,
    Request,
    TransientError,
)
from mindprobe.core.retry import RetryPolicy
from mindprobe.errors import ModelError
from mindprobe.models.endpoint_client import (
    Endpoint,
    EndpointClient,
    EndpointFailure,
    agreed_identity,
    local_reference,
)
from mindprobe.models.endpoint_pool import (
    Launcher,
    build_endpoints,
    capacity_weights,
    down_list,
    lacking,
    pool_dropped,
    pool_notes,
    pool_stats,
    pool_warnings,
    probe_all,
)
from mindprobe.models.endpoints import EndpointSpec

log = logging.getLogger("mindprobe.router")

#: Items in flight per endpoint when neither the file nor the run says (the single-server default).
DEFAULT_PER_ENDPOINT = 16


class RouterModel(Model):
    """A Model over several OpenAI-compatible endpoints (or Ray replicas) of one model."""

    supports_slots = True

    def deterministic(self, concurrency: int) -> bool | None:
        """Several servers sharing items: their engines decide (unknown)."""
        return None

    @property  # type: ignore[override]
    def heavy_start(self) -> bool:
        """Replicas it launches load the model; endpoints it is given are only asked."""
        return self._launcher is not None

    def __init__(
        self,
        model: str,
        endpoints: list[EndpointSpec] | None,
        *,
        spec: str,
        label: str,
        group: str,
        timeout: float = 300.0,
        max_attempts: int = 6,
        launcher: Launcher | None = None,
        all_down_after: float = 10.0,
        reasoning: Reasoning = NO_REASONING,
    ) -> None:
        if not endpoints and launcher is None:
            raise ModelError(f"{spec}: no endpoints")
        self.model = model
        self.spec = spec
        self.label = label
        self.group = group
        self.timeout = timeout
        #: Attempts per request, the backoff before one goes to the same endpoint again and
        #: when the pool is dead (`core.retry`): an endpoint out of rotation is its health
        #: check's (cooldown, probe); the pool's liveness counts only failures that leave no
        #: endpoint up (each endpoint needed its own to go down), so one starts the outage and
        #: `all_down_after` seconds of it, whatever failed, end the run.
        self.retry = RetryPolicy(max_attempts, dead_streak=1, refused_window=all_down_after,
                                 broken_window=all_down_after)
        self.reasoning = reasoning
        self._specs = list(endpoints or [])
        self._launcher = launcher
        self._identity_extra: dict[str, Any] = {}
        if launcher is not None:  # replicas of `local`: declare what it declares
            ref = local_reference()
            # a GGUF of the user's own is served as a chat model (see LocalModel)
            own_gguf = getattr(launcher, "gguf", None) is not None
            self.capabilities = ref.capabilities - ({"base"} if own_gguf else set())
            self.token_count_method = ref.token_count_method
            self.score_requests = ref.score_requests
            self.set_context_window(ref.context_window, ref.context_window_source or "")
            self.default_concurrency = launcher.n  # one slot per replica: reproducible replies
        else:  # what a single `openai:MODEL@URL` declares until the servers are probed
            first = EndpointClient(model, self._specs[0], timeout=timeout, grammar="llama",
                                   reasoning=reasoning)
            self.capabilities = first.capabilities
            self._identity_extra = dict(first._identity_extra)
            caps = [s.concurrency for s in self._specs]
            self.default_concurrency = sum(c or DEFAULT_PER_ENDPOINT for c in caps)
        self._concurrency = self.default_concurrency
        self._eps: list[Endpoint] = []
        self._affinity: dict[int, tuple[Endpoint, int | None]] = {}
        #: The endpoint each prefix group was last sent to.
        self._homes: dict[str, Endpoint] = {}
        self._ids = itertools.count(1)
        self._wake = asyncio.Event()
        self._rr = 0
        self._t0: float | None = None
        self._closed = False
        self._weights: dict[int, float] = {}

    # -- lifecycle ----------------------------------------------------------------------------
    def configure(self, concurrency: int) -> None:
        self._concurrency = max(1, concurrency)

    async def start(self) -> None:
        if self._eps and not self._closed:
            return
        self._eps, self._affinity, self._homes, self._t0 = [], {}, {}, None
        self._closed = False
        self.retry.started()
        self._wake = asyncio.Event()
        if self._launcher is not None:
            slots = max(1, math.ceil(self._concurrency / self._launcher.n))
            self._specs = await self._launcher.start(slots, self.timeout)
        self._eps = build_endpoints(self.model, self._specs, self.timeout, self.reasoning,
                                    self.capabilities if self._launcher is not None else None)
        self._weights = capacity_weights(self._eps)
        try:
            await probe_all(self.model, self._eps)
            if self._launcher is None:
                self._identity_extra.update(agreed_identity(self.model, self._eps))
        except BaseException:
            await self.close()
            raise
        for e in self._eps:
            if not e.health.up:
                e.probe_task = asyncio.create_task(self._probe_loop(e))
        live = [e.client for e in self._eps if e.health.up]
        if self._launcher is None:
            self.capabilities = frozenset.intersection(*(frozenset(c.capabilities) for c in live))
            windows = [c.context_window for c in live if c.context_window]
            if windows:  # the smallest of the endpoints': every item must fit any of them
                self.set_context_window(min(windows), "the endpoints' smallest window")

    async def close(self) -> None:
        self._closed = True
        for e in self._eps:
            if e.probe_task is not None:
                e.probe_task.cancel()
        tasks = [e.probe_task for e in self._eps if e.probe_task is not None]
        await asyncio.gather(*tasks, return_exceptions=True)
        for e in self._eps:
            await e.client.close()
        if self._launcher is not None:
            await self._launcher.stop()

    # -- identity -----------------------------------------------------------------------------
    def identity(self) -> dict[str, Any]:
        if self._launcher is not None:
            return self._launcher.identity()
        return {"model": self.model, "endpoint_group": self.group, **self._identity_extra}

    def describe(self) -> dict[str, Any]:
        dropped = pool_dropped(self._eps, self.capabilities)  # some endpoint's server lacks
        return {**super().describe(), "endpoint_group": self.group,
                "endpoints": [e.spec.url for e in self._eps] or [s.url for s in self._specs],
                **({"dropped_capabilities": dropped} if dropped else {})}

    # -- routing ------------------------------------------------------------------------------
    def _notify(self) -> None:
        self._wake.set()
        self._wake = asyncio.Event()

    def _pick(self, capped: bool = True) -> Endpoint | None:
        free = [e for e in self._eps if e.health.up and not (capped and e.full)]
        if not free:
            return None
        self._rr += 1
        n = len(self._eps)
        return min(free, key=lambda e: (e.active / self._weights[e.index], e.ewma,
                                        (e.index - self._rr) % n))

    async def _choose(self, capped: bool = True) -> Endpoint:
        """The endpoint for a new item; waits while all are busy or down (and gives up when all
        are down and the pool's outage has lasted its window). Uncapped: a request outside any
        item."""
        while True:
            ep = self._pick(capped)
            if ep is not None:
                return ep
            left = None if self._any_up() else self._outage_left()
            wake = self._wake
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), left)

    def _any_up(self) -> bool:
        return any(e.health.up for e in self._eps)

    def _outage_left(self) -> float | None:
        """How long to wait for an endpoint to come back (None: until the next failure or
        answer wakes us); ModelError once the pool is dead."""
        dead = self.retry.dead()
        if dead:
            raise ModelError(f"all {len(self._eps)} endpoints of {self.model} are down "
                             f"({dead}): {down_list(self._eps)}")
        return self.retry.outage_left()

    def _pool_failed(self, refused: bool) -> None:
        """A failure with no endpoint up: the pool's outage goes on (or starts)."""
        if not self._any_up():
            self.retry.failed(refused)
            self._notify()  # waiters look at the outage again

    async def acquire_slot(self, group: str | None = None) -> int:
        """An item's conversation id; an item of a prefix group goes to the endpoint that
        served the group last while it is up and has room (its cache holds the prefix)."""
        home = self._homes.get(group) if group is not None else None
        least = self._pick()
        if home is not None and home.health.up and not home.full and (
                least is None or home.active / self._weights[home.index]
                <= least.active / self._weights[least.index]):
            ep = home  # unless another endpoint is less loaded: groups still spread
        else:
            ep = await self._choose()
        if group is not None:
            self._homes[group] = ep
        conv = next(self._ids)
        self._affinity[conv] = (ep, ep.take(group))
        return conv

    def release_slot(self, slot: int) -> None:
        entry = self._affinity.pop(slot, None)
        if entry is not None:
            entry[0].give(entry[1])
            self._notify()

    async def _route(self, conv: int | None) -> tuple[Endpoint, int | None]:
        """(endpoint, its llama.cpp slot) of an item's request; a request outside any item
        (no slot) goes to the least-loaded live endpoint and takes no item slot."""
        if conv is None:
            return await self._choose(capped=False), None
        entry = self._affinity.get(conv)
        if entry is not None and entry[0].health.up:
            return entry
        if entry is not None:  # its endpoint went down: move the item to a live one
            del self._affinity[conv]
            entry[0].give(entry[1])
            entry[0].moved += 1
            self._notify()
        ep = await self._choose()
        self._affinity[conv] = (ep, ep.take())
        return self._affinity[conv]

    async def _call(self, conv: int | None,
                    fn: Callable[[EndpointClient, int | None], Awaitable[Any]],
                    cost: Callable[[Any], Completion | None]) -> Any:
        attempts = 0
        if self._t0 is None:
            self._t0 = time.monotonic()
        while True:
            ep, local = await self._route(conv)
            ep.inflight += 1
            ep.requests += 1
            t0 = time.perf_counter()
            try:
                result = await fn(ep.client, local)
            except EndpointFailure as f:
                ep.errors += 1
                attempts += 1
                last = f"{ep.spec.url}: {f}"
                if ep.health.failure(f.kind, str(f), time.monotonic()):
                    self._went_down(ep)
                if f.kind != "busy":  # a 429 is the server at work
                    self._pool_failed(f.kind == "refused")
                if self.retry.exhausted(attempts):
                    kind = "connection" if f.kind in ("refused", "dropped") else "other"
                    raise TransientError(f"gave up after {attempts} attempts: {last}",
                                         kind) from None
                if ep.health.up:  # same endpoint again: back off; a move goes at once
                    await self.retry.wait(attempts - 1, f.retry_after)
                continue
            except TransientError:
                ep.errors += 1
                raise
            finally:
                ep.inflight -= 1
            ep.health.ok()
            self.retry.answered()
            extra = result.requests - 1 if isinstance(result, ChoiceScores) else 0
            ep.answered(extra, time.perf_counter() - t0, cost(result))
            return result

    def _went_down(self, ep: Endpoint) -> None:
        log.warning("endpoint %s taken out of rotation (%s); probing it again in %.1f s",
                    ep.spec.url, ep.health.reason, ep.health.until - time.monotonic())
        if ep.probe_task is None or ep.probe_task.done():
            ep.probe_task = asyncio.create_task(self._probe_loop(ep))
        self._notify()

    async def _probe_loop(self, ep: Endpoint) -> None:
        while not self._closed:
            await asyncio.sleep(max(0.0, ep.health.until - time.monotonic()))
            try:
                await ep.client.probe()
            except (EndpointFailure, ModelError) as exc:
                ep.health.probe_failed(str(exc), time.monotonic())
                self._pool_failed(getattr(exc, "kind", "") == "refused")
                continue
            lacks = lacking(ep.client, self.capabilities)
            if lacks:  # the run chose its requests by what the others offer
                ep.health.probe_failed(lacks, time.monotonic())
                continue
            ep.health.back()
            self.retry.answered()
            log.warning("endpoint %s answers again; back in rotation", ep.spec.url)
            self._notify()
            return

    # -- the Model interface ------------------------------------------------------------------
    async def complete(self, request: Request, ctx: CallContext) -> Completion:
        return await self._call(
            request.slot, lambda c, local: c.complete(replace(request, slot=local), ctx),
            lambda comp: comp)

    async def score_choices(self, request: Request, candidates: list[str],
                            ctx: CallContext) -> ChoiceScores:
        return await self._call(
            request.slot,
            lambda c, local: c.score_choices(replace(request, slot=local), candidates, ctx),
            lambda s: s.cost)

    async def tokenize(self, text: str, add_special: bool = True) -> list[int]:
        if not self.can("tokenize"):
            return await super().tokenize(text, add_special)
        return await self._call(None, lambda c, _: c.tokenize(text, add_special), lambda _: None)

    async def apply_template(self, messages: list[dict[str, str]]) -> str:
        if not self.can("template"):
            return await super().apply_template(messages)
        return await self._call(None, lambda c, _: c.apply_template(messages), lambda _: None)

    async def count_tokens(self, messages: list[dict[str, str]] | str) -> int:
        if not self.can("tokenize"):
            return await super().count_tokens(messages)
        return await self._call(None, lambda c, _: c.count_tokens(messages), lambda _: None)

    def take_notes(self) -> list[str]:
        return pool_notes(self._eps)

    def take_warnings(self) -> list[str]:
        return pool_warnings(self._eps)

    def endpoint_stats(self) -> list[dict[str, Any]]:
        return pool_stats(self._eps, self._launcher, self._specs, self._t0)
