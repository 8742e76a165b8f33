"""The endpoints of a router as a pool: who starts them (a `Launcher`), their clients, the
first probe that decides which are up, their capacities, and what the run summary says of each.

The router (`router.py`) routes items over the pool and fails over between its endpoints; this
module only builds, starts and describes it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Protocol

from mindprobe.core.model import NO_REASONING, Reasoning
from mindprobe.errors import ModelError
from mindprobe.models.endpoint_client import (
    Endpoint,
    EndpointClient,
    EndpointFailure,
    LlamaEndpointClient,
)
from mindprobe.models.endpoints import EndpointSpec
from mindprobe.models.replies import ReplyTally
from mindprobe.models.slots import link_folders

log = logging.getLogger("mindprobe.router")


class Launcher(Protocol):
    """Starts the servers of a router (Ray replicas) and stops them again."""

    n: int

    async def start(self, slots: int, timeout: float) -> list[EndpointSpec]: ...

    async def stop(self) -> None: ...

    def identity(self) -> dict[str, Any]: ...

    def pending(self) -> list[str]: ...


def build_endpoints(model: str, specs: list[EndpointSpec], timeout: float,
                    reasoning: Reasoning = NO_REASONING,
                    capabilities: frozenset[str] | None = None) -> list[Endpoint]:
    """One client per endpoint (llama.cpp's with its slots where the file says so);
    `capabilities`: what replicas started by mindprobe declare (else each server's own)."""
    eps = []
    for i, s in enumerate(specs):
        client: EndpointClient = (
            LlamaEndpointClient(model, s, timeout=timeout, reasoning=reasoning)
            if s.llama_slots
            else EndpointClient(model, s, timeout=timeout, grammar="llama",
                                reasoning=reasoning))
        if capabilities is not None:
            client.capabilities = capabilities
        eps.append(Endpoint(i, s, client))  # a llama.cpp client copies between its slots
    # ... and between those of servers that save slots into one folder
    link_folders([(e.free_slots, e.spec.slot_dir) for e in eps if e.free_slots is not None])
    return eps


def capacity_weights(eps: list[Endpoint]) -> dict[int, float]:
    """Each endpoint's share of the load: its `concurrency=N`, else the mean of those given."""
    given = [e.spec.concurrency for e in eps if e.spec.concurrency]
    mean = sum(given) / len(given) if given else 1.0
    return {e.index: float(e.spec.concurrency or mean) for e in eps}


async def probe_all(model: str, eps: list[Endpoint]) -> None:
    """Start every client and probe it once: those that do not answer start out down (probed
    again later by the router); none answering is a ModelError naming each."""
    for e in eps:
        await e.client.start()
    outcomes = await asyncio.gather(*(e.client.probe() for e in eps), return_exceptions=True)
    for e, out in zip(eps, outcomes, strict=True):
        if isinstance(out, EndpointFailure):
            e.health.down(str(out), time.monotonic())
        elif isinstance(out, BaseException):
            raise out
    if not any(e.health.up for e in eps):
        raise ModelError(f"none of the {len(eps)} endpoints of {model} answers: "
                         f"{down_list(eps)}")
    for e in eps:
        if not e.health.up:
            log.warning("endpoint %s does not answer (%s); probing it again later",
                        e.spec.url, e.health.reason)


def pool_notes(eps: list[Endpoint]) -> list[str]:
    """The endpoints' notes (`take_notes`), one line for all that taught the same."""
    where: dict[str, list[str]] = {}
    for e in eps:
        for text, server in e.client.take_note_parts():
            where.setdefault(text, []).append(server)
    return [text.replace("{where}", ", ".join(servers)) for text, servers in where.items()]


def pool_dropped(eps: list[Endpoint], offered: frozenset[str]) -> dict[str, str]:
    """Why the pool lacks a capability its endpoints' clients dropped, naming each endpoint."""
    dropped: dict[str, str] = {}
    for e in eps:
        for cap, why in e.client.dropped.items():
            if cap not in offered:
                dropped[cap] = "; ".join(filter(None, (dropped.get(cap), f"{e.spec.url}: {why}")))
    return dropped


def lacking(client: EndpointClient, declared: frozenset[str]) -> str:
    """Why an endpoint answering again cannot serve the run ("": it can): its server lacks
    what the pool declared when it started (e.g. /apply-template, so "template")."""
    by_why: dict[str, list[str]] = {}
    for cap in sorted(declared & client.dropped.keys()):
        by_why.setdefault(client.dropped[cap], []).append(cap)
    return "; ".join(f"lacks {', '.join(caps)}: {why}" for why, caps in by_why.items())


def down_list(eps: list[Endpoint]) -> str:
    return "; ".join(f"{e.spec.url} ({e.health.reason or 'down'})" for e in eps)


def pool_warnings(eps: list[Endpoint]) -> list[str]:
    """What the endpoints' replies held that the run should hear, one warning for all."""
    tally = ReplyTally()
    for e in eps:
        tally.absorb(e.client.replies)
    return tally.take()


def pool_stats(eps: list[Endpoint], launcher: Launcher | None, specs: list[EndpointSpec],
               t0: float | None) -> list[dict[str, Any]]:
    """The run summary's line of each endpoint (`t0`: when the first request went out); those
    not started yet (a launcher's still pending, or none started) by name."""
    if not eps:
        if launcher is not None:
            return [{"endpoint": name, "state": "not started", "concurrency": None}
                    for name in launcher.pending()]
        return [{"endpoint": s.url, "state": "not started", "concurrency": s.concurrency}
                for s in specs]
    span = max(1e-9, time.monotonic() - t0) if t0 is not None else None
    return [endpoint_stats(e, span) for e in eps]


def endpoint_stats(e: Endpoint, span: float | None) -> dict[str, Any]:
    """One endpoint's line of the run summary (`span`: seconds since the first request)."""
    return {
        "endpoint": e.spec.url,
        "source": e.spec.source,
        "state": e.health.state,
        "concurrency": e.spec.concurrency,
        "items": e.items,
        "moved_away": e.moved,
        "requests": e.requests,
        "ok": e.ok,
        "errors": e.errors,
        "downs": e.health.downs,
        "last_error": e.health.reason or None,
        "prompt_tokens": e.prompt_tokens,
        "cached_prompt_tokens": e.cached_prompt_tokens,
        "completion_tokens": e.completion_tokens,
        "mean_latency_s": round(e.latency / e.ok, 4) if e.ok else None,
        "requests_per_s": round(e.ok / span, 2) if span else 0.0,
    }
