"""One dead-server rule (`core.retry.Liveness`) for the model client, the router's pool of
endpoints and the runner's safety net: a streak of failures *and* an outage counted from the
streak's first failure, so a restart is ridden out however long the last answer took, and a
server that stays away stops the run with one message. Real servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from rich.console import Console

from mindprobe.core.plan import Item
from mindprobe.core.retry import RetryPolicy
from mindprobe.core.runner import PassSettings, execute
from mindprobe.core.session import Session
from mindprobe.core.store import RunStore, read_records
from mindprobe.errors import ModelError
from mindprobe.models.base import CallContext, Completion, Model, Request, TransientError
from mindprobe.models.endpoints import EndpointSpec
from mindprobe.models.openai_compat import OpenAICompatModel
from mindprobe.models.router import RouterModel
from mindprobe.testing import TestServer

ASK = Request(messages=[{"role": "user", "content": "q"}], max_tokens=4)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _restart_later(port: int, after: float) -> tuple[threading.Thread, list[TestServer]]:
    """A server on `port` again after `after` seconds (a restart); stop it with the list."""
    started: list[TestServer] = []

    def go() -> None:
        time.sleep(after)
        started.append(TestServer(port=port).start())
    t = threading.Thread(target=go, daemon=True)
    t.start()
    return t, started


def test_the_outage_counts_from_the_first_failure_not_the_last_answer():
    policy = RetryPolicy(dead_streak=2, refused_window=0.2, broken_window=5.0)
    policy.answered()
    time.sleep(0.3)  # a long quiet spell (a slow generation) is not an outage
    assert policy.failed(refused=True) is None and policy.failed(refused=True) is None
    left = policy.outage_left()
    assert left is not None and 0.0 < left <= 0.2
    time.sleep(left + 0.01)
    assert policy.dead() and "2 failed requests in a row" in (policy.dead() or "")
    assert policy.failed(refused=False) is None  # a broken answer: the longer window
    policy.answered()
    assert policy.dead() is None and policy.outage_left() is None


@pytest.mark.slow
def test_the_model_client_rides_out_a_restart_after_a_slow_answer():
    """The last answer came longer ago than the window: the restart still gets all of it."""
    srv = TestServer().start()
    port = srv.port
    model = OpenAICompatModel("test-model", srv.base_url, None, spec="t", label="t",
                              grammar="llama", max_attempts=40, backoff_base=0.02,
                              backoff_max=0.05)
    model.retry.dead_streak, model.retry.refused_window = 3, 2.0
    restarted: list[TestServer] = []

    async def go() -> list[str]:
        await model.start()
        try:
            first = await model.complete(ASK, CallContext("i", 0, 0))
            await asyncio.sleep(2.3)  # quiet for longer than the window
            srv.stop()
            t, servers = _restart_later(port, 0.3)
            restarted.extend(servers)
            second = await model.complete(ASK, CallContext("i", 1, 0))
            t.join()
            return [first.text, second.text]
        finally:
            await model.close()

    try:
        assert asyncio.run(go()) == ["OK", "OK"]
    finally:
        srv.stop()
        for s in restarted:
            s.stop()


@pytest.mark.slow
def test_the_router_rides_out_a_restart_of_every_endpoint_then_stops_when_they_stay_away():
    a, b = TestServer().start(), TestServer().start()
    ports = [a.port, b.port]
    router = RouterModel("test-model", [EndpointSpec(a.base_url), EndpointSpec(b.base_url)],
                         spec="r", label="r", group="g", all_down_after=2.0)
    assert router.retry.refused_window == router.retry.broken_window == 2.0
    back: list[TestServer] = []

    async def go() -> float:
        await router.start()
        try:
            conv = await router.acquire_slot()
            await router.complete(replace(ASK, slot=conv), CallContext("i", 0, 0))
            router.release_slot(conv)
            await asyncio.sleep(2.5)  # nothing asked for longer than the window
            a.stop()
            b.stop()
            t, servers = _restart_later(ports[0], 0.3)
            comp = await router.complete(ASK, CallContext("i", 1, 0))  # rides it out
            t.join()
            back.extend(servers)
            assert comp.text == "OK"
            for s in back:
                s.stop()  # gone for good now
            t0 = time.monotonic()
            with pytest.raises(ModelError, match="all 2 endpoints of test-model are down"):
                await router.complete(ASK, CallContext("i", 2, 0))
            return time.monotonic() - t0
        finally:
            await router.close()

    try:
        waited = asyncio.run(go())
    finally:
        for s in (a, b, *back):
            s.stop()
    assert 1.8 <= waited < 6.0  # the window, counted from the first failure


class NoPolicyModel(Model):
    """A plugin backend with no retries and no dead-server rule of its own: one POST per
    request, a refused connection is a connection error at once."""

    label = spec = "plugin"
    cacheable = False

    def __init__(self, url: str) -> None:
        self.url = url
        self.requests = 0

    async def complete(self, request: Request, ctx: CallContext) -> Completion:
        self.requests += 1
        try:
            async with aiohttp.ClientSession() as http, http.post(
                    f"{self.url}/chat/completions",
                    json={"model": "test-model", "messages": request.messages}) as resp:
                body = await resp.json()
        except aiohttp.ClientConnectorError as exc:
            raise TransientError(f"refused: {exc}", "connection") from None
        return Completion(text=body["choices"][0]["message"]["content"])


async def _play(item: Item, session: Session) -> dict[str, Any]:
    comp = await session.generate(ASK)
    return {"reply": comp.text}


def _execute(model: Model, n: int, run_dir: Path, dead_after: int = 0):
    async def go():
        store = RunStore(run_dir)
        store.open({"benchmark": "t", "variant": "v", "model": "m", "config": {}, "data": {}})
        try:
            return await execute([Item(f"i{k}", k) for k in range(n)], _play,
                                 {"model": model}, store, {},
                                 PassSettings(concurrency=4, dead_after=dead_after),
                                 console=Console(quiet=True), description="t")
        finally:
            store.close("failed")
    return asyncio.run(go())


def test_a_model_without_a_policy_stops_the_run_after_a_streak_of_items(tmp_path):
    """The runner's safety net: 10,000 items against nothing listening stop after the streak
    (max(12, 2 x concurrency) items), none of them recorded, one message."""
    model = NoPolicyModel(f"http://127.0.0.1:{_closed_port()}/v1")
    with pytest.raises(ModelError, match="stopped answering: 12 items in a row failed"):
        _execute(model, 10_000, tmp_path / "run")
    assert model.requests < 40
    assert read_records(tmp_path / "run" / "records.jsonl") == []
