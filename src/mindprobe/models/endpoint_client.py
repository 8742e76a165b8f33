"""One endpoint of a router: the OpenAI-compatible client with each failed attempt classified
(refused, dropped, timeout, server, busy, malformed), so the router can tell an endpoint that is
down from one that is only busy, and a llama.cpp variant that keeps KV slots."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import aiohttp
import orjson

from mindprobe.core.model import (
    NO_REASONING,
    CallContext,
    Completion,
    Reasoning,
    Request,
    TransientError,
)
from mindprobe.errors import ModelError
from mindprobe.models.endpoints import EndpointSpec, Health
from mindprobe.models.llamacpp import LlamaCppFeatures
from mindprobe.models.local import LocalModel
from mindprobe.models.openai_compat import OpenAICompatModel
from mindprobe.models.replies import load_reply
from mindprobe.models.slots import SlotPool
from mindprobe.models.wire import (
    RETRYABLE_STATUS,
    error_text,
    json_answer,
    parse_retry_after,
)


class EndpointFailure(Exception):
    """One attempt on one endpoint failed; `kind` says whose fault it probably was: refused,
    dropped, timeout, server (5xx) count against the endpoint; busy (429) and malformed not."""

    def __init__(self, message: str, kind: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.retry_after = retry_after


class EndpointClient(OpenAICompatModel):
    """One endpoint's HTTP client: one attempt per call, failures classified for the router."""

    def __init__(self, model: str, spec: EndpointSpec, *, timeout: float,
                 grammar: str | None, reasoning: Reasoning = NO_REASONING) -> None:
        super().__init__(model, spec.url, spec.key, spec=f"{model}@{spec.url}", label=model,
                         timeout=timeout, max_attempts=1, grammar=grammar, reasoning=reasoning,
                         credentials=spec.credentials)
        self.key_env = spec.key_env
        self.supports_slots = spec.llama_slots

    async def start(self) -> None:
        """Open the connection pool only; the router probes (`probe`) and decides."""
        if self._session is None:
            self._session = self._new_session(self.timeout)

    def _auth_message(self, status: int) -> str:
        env = self.key_env or "MINDPROBE_API_KEY"
        return (f"the server at {self.base_url} refused the request ({status} unauthorised); "
                f"set {env} to a valid API key")

    async def probe(self) -> None:
        """`GET /models`: learn what the server is; EndpointFailure when it does not answer."""
        assert self._session is not None
        try:
            async with self._session.get(f"{self.base_url}/models",
                                         timeout=aiohttp.ClientTimeout(total=10)) as resp:
                body, status = await resp.read(), resp.status
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            raise EndpointFailure(_describe(exc), _kind(exc)) from None
        if status in (401, 403):
            raise ModelError(self._auth_message(status))
        if status >= 500:
            raise EndpointFailure(f"HTTP {status} on /models", "server")
        if status != 200:
            return  # servers without /models are fine
        try:
            entries = json.loads(body).get("data", [])
        except (ValueError, AttributeError):
            return
        self._offered = [str(m.get("id")) for m in entries if isinstance(m, dict) and m.get("id")]
        await self._learn_server(entries)

    async def complete(self, request: Request, ctx: CallContext) -> Completion:
        path, body = self.build_body(request)
        t0 = time.perf_counter()
        try:
            assert self._session is not None, "model not started"
            async with self._session.post(self.base_url + path, data=orjson.dumps(body)) as resp:
                status, raw = resp.status, await resp.read()
                retry_after = resp.headers.get("Retry-After")
        except (TimeoutError, aiohttp.ClientError, ConnectionError) as exc:
            raise EndpointFailure(_describe(exc), _kind(exc)) from None
        if status == 200:
            try:
                comp = self._parse(load_reply(raw), path, time.perf_counter() - t0)
            except (ValueError, KeyError, IndexError, TypeError) as exc:
                raise EndpointFailure(f"malformed response body ({type(exc).__name__}: {exc})",
                                      "malformed") from None
            if request.constrain and self.grammar == "openai":
                comp.text = json_answer(comp.text)
            return comp
        self._raise_fatal(status, raw)
        text = f"HTTP {status}: {error_text(raw)}"
        if status == 429:
            raise EndpointFailure(text, "busy", parse_retry_after(retry_after))
        if status in RETRYABLE_STATUS:
            raise EndpointFailure(text, "server", parse_retry_after(retry_after))
        raise TransientError(text)  # the request itself is wrong: no endpoint will take it

    async def _post_root(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST to a llama.cpp endpoint outside /v1 (tokenize, apply-template)."""
        assert self._session is not None, "model not started"
        try:
            async with self._session.post(self.base_url.removesuffix("/v1") + path,
                                          json=body) as resp:
                payload = await resp.json(content_type=None)
                status = resp.status
        except (TimeoutError, aiohttp.ClientError, ConnectionError) as exc:
            raise EndpointFailure(_describe(exc), _kind(exc)) from None
        except ValueError as exc:
            raise EndpointFailure(f"llama.cpp {path}: {exc}", "malformed") from None
        if status >= 500:
            raise EndpointFailure(f"llama.cpp {path} answered HTTP {status}", "server")
        if status != 200 or not isinstance(payload, dict):
            raise TransientError(f"llama.cpp {path} answered HTTP {status}")
        return payload


class LlamaEndpointClient(LlamaCppFeatures, EndpointClient):
    """A llama.cpp replica started by mindprobe: scores and counts tokens exactly like `local`
    (same identity, so the same cache entries must mean the same thing)."""

    _post_root = EndpointClient._post_root  # failures mark the endpoint, as for requests

    def __init__(self, model: str, spec: EndpointSpec, *, timeout: float,
                 reasoning: Reasoning = NO_REASONING) -> None:
        super().__init__(model, spec, timeout=timeout, grammar="llama", reasoning=reasoning)
        self.grammar_fixed = True
        self.capabilities = local_reference().capabilities


def local_reference() -> LocalModel:
    """What `local` declares (capabilities, context, token counting); nothing is started."""
    return LocalModel(None, spec="local")


def _kind(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "timeout"
    if isinstance(exc, (aiohttp.ClientConnectorError, ConnectionRefusedError)):
        return "refused"
    return "dropped"


def _describe(exc: BaseException) -> str:
    kind = _kind(exc)
    if kind == "timeout":
        return "no answer in time (timeout)"
    if kind == "refused":
        return "cannot connect"
    return f"connection dropped ({type(exc).__name__}: {exc})" if str(exc) \
        else f"connection dropped ({type(exc).__name__})"


class Endpoint:
    """An endpoint as the router sees it: client, health, load and counters."""

    def __init__(self, index: int, spec: EndpointSpec, client: EndpointClient) -> None:
        self.index = index
        self.spec = spec
        self.client = client
        self.health = Health()
        self.active = 0  # items whose affinity is here
        self.inflight = 0
        self.free_slots = SlotPool(spec.concurrency or 1) if spec.llama_slots else None
        if self.free_slots is not None and isinstance(client, LlamaEndpointClient):
            self.free_slots.attach(client)  # prefix copies between its slots (and peers')
        self.requests = self.ok = self.errors = self.items = self.moved = 0
        self.prompt_tokens = self.cached_prompt_tokens = self.completion_tokens = 0
        self.latency = 0.0
        self.ewma = 0.0
        self.probe_task: asyncio.Task[None] | None = None

    @property
    def full(self) -> bool:
        return self.spec.concurrency is not None and self.active >= self.spec.concurrency

    def take(self, group: str | None = None) -> int | None:
        self.active += 1
        self.items += 1
        return self.free_slots.take_nowait(group) if self.free_slots is not None else None

    def give(self, local: int | None) -> None:
        self.active -= 1
        if local is not None and self.free_slots is not None:
            self.free_slots.give(local)

    def answered(self, extra: int, elapsed: float, cost: Completion | None) -> None:
        """Count one answered call that took `elapsed` seconds and cost `cost`'s tokens (None:
        none to count); `extra`: requests it sent beyond one."""
        self.requests += extra  # score_choices may send one request per candidate
        self.ok += 1 + extra
        self.latency += elapsed
        self.ewma = elapsed if self.ewma == 0 else 0.8 * self.ewma + 0.2 * elapsed
        if cost is not None:
            self.prompt_tokens += cost.prompt_tokens
            self.cached_prompt_tokens += cost.cached_prompt_tokens
            self.completion_tokens += cost.completion_tokens


def agreed_identity(model: str, endpoints: list[Endpoint]) -> dict[str, Any]:
    """What the answering servers say they serve (see `served_identity`): part of a routed
    run's identity, as for one server; servers that disagree are not one model."""
    seen: dict[str, tuple[str, dict[str, Any]]] = {}
    for e in endpoints:
        if e.health.up:
            seen.setdefault(json.dumps(e.client.served, sort_keys=True),
                            (e.spec.url, e.client.served))
    if len(seen) > 1:
        shown = "; ".join(f"{url}: {served or 'nothing said'}" for url, served in seen.values())
        raise ModelError(f"the endpoints of {model} serve different models ({shown}); list "
                         "servers of one model only")
    return next(iter(seen.values()))[1] if seen else {}
