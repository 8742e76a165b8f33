"""A llama.cpp server without `POST /apply-template` (builds before January 2025, forks, proxies
of /v1 and /completion only): the client finds out at start, drops "template" and "prefix" with
one note, counts tokens without the template, and a router offers only what all its live
endpoints offer. Real test servers on 127.0.0.1, no client patching."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest

from mindprobe.models import parse_model_spec
from mindprobe.models.openai_compat import OpenAICompatModel
from mindprobe.models.router import RouterModel
from mindprobe.testing import TestServer

MESSAGES = [{"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Which came first, the egg or the hen?"}]


def template(messages: list[dict]) -> str:
    return "".join(f"<|{m['role']}|> {m['content']} <|end|> " for m in messages) + "<|assistant|>"


def words(text: str, add_special: bool) -> list[int]:
    return [1] * add_special + [len(w) for w in text.split()]


def _started(url: str) -> OpenAICompatModel:
    """Started and closed: what it learnt at start stays."""
    model = OpenAICompatModel("test-model", url, None, spec="t", label="t", grammar="llama")

    async def go() -> None:
        await model.start()
        await model.close()
    asyncio.run(go())
    return model


@pytest.mark.parametrize("server, has_it, why", [
    ({}, False, "HTTP 404"),
    ({"apply_template_status": 405}, False, "HTTP 405"),
    ({"apply_template_status": 500}, True, ""),  # a server in trouble says nothing
    ({"apply_template_status": 0}, True, ""),  # nor does a dropped connection
    ({"chat_template": template}, True, ""),
])
def test_apply_template_is_asked_once_at_start(server, has_it, why):
    with TestServer(owned_by="llamacpp", tokenizer=words, **server) as srv:
        model, url = _started(srv.base_url), srv.base_url.removesuffix("/v1")
    notes = model.take_notes()
    assert model.can("template") is has_it and model.can("prefix") is has_it
    assert model.can("tokenize") and model.can("grammar")
    if has_it:
        assert notes == [] and "dropped_capabilities" not in model.describe()
    else:
        assert len(notes) == 1
        assert f"no POST /apply-template at the llama.cpp server {url} ({why})" in notes[0]
        assert "(SORT)" in notes[0] and "/v1/chat/completions" in notes[0]
        dropped = model.describe()["dropped_capabilities"]
        assert set(dropped) == {"template", "prefix"} and why in dropped["template"]
        assert model.take_notes() == []  # told once


def test_a_server_not_known_as_llamacpp_is_not_asked():
    with TestServer(owned_by="vllm") as srv:
        model = _started(srv.base_url)
    assert model.can("prefix") and not model.can("template") and model.take_notes() == []


def test_tokens_are_counted_without_the_template_and_said_so():
    async def counts(model: OpenAICompatModel) -> tuple[int, int | None]:
        await model.start()
        try:
            return await model.count_tokens(MESSAGES), await model.count_chat(MESSAGES)
        finally:
            await model.close()

    with TestServer(owned_by="llamacpp", tokenizer=words) as srv:
        bare = OpenAICompatModel("test-model", srv.base_url, None, spec="t", label="t")
        n, chat = asyncio.run(counts(bare))
    assert n == len(words("\n".join(m["content"] for m in MESSAGES), True))
    assert chat is None  # plans then count per message (`profiling.tokens`)
    assert "chat template's own tokens not counted" in bare.token_count_method
    with TestServer(owned_by="llamacpp", tokenizer=words, chat_template=template) as srv:
        full = OpenAICompatModel("test-model", srv.base_url, None, spec="t", label="t")
        n_full, chat_full = asyncio.run(counts(full))
    assert n_full == len(words(template(MESSAGES), True)) > n
    assert chat_full == len(words(template(MESSAGES), False))
    assert full.token_count_method == "llama.cpp tokenizer of the server"


def test_a_router_offers_the_template_only_when_every_endpoint_has_it():
    """The pool offers what all its live endpoints offer; one line names every server that
    lacks /apply-template."""
    with TestServer(owned_by="llamacpp", chat_template=template) as a, \
            TestServer(owned_by="llamacpp") as b, TestServer(owned_by="llamacpp") as c:
        router = parse_model_spec(f"openai:test-model@{a.base_url},{b.base_url},{c.base_url}")
        assert isinstance(router, RouterModel)
        asyncio.run(router.start())
        try:
            notes = router.take_notes()
            described = router.describe()
        finally:
            asyncio.run(router.close())
        lacking = [s.base_url.removesuffix("/v1") for s in (b, c)]
    assert not router.can("template") and not router.can("prefix") and router.can("grammar")
    assert len(notes) == 1
    assert f"no POST /apply-template at the llama.cpp server {', '.join(lacking)} (HTTP 404)" \
        in notes[0]
    why = "the server has no POST /apply-template (HTTP 404)"
    assert described["dropped_capabilities"] == {
        cap: "; ".join(f"{u}/v1: {why}" for u in lacking) for cap in ("prefix", "template")}


@pytest.mark.parametrize("status", [500, 0], ids=["500", "dropped"])
def test_a_pool_whose_servers_say_nothing_keeps_what_they_declared(status):
    """A 500 or a dropped connection from /apply-template decides nothing: the pool starts,
    offers the template and prefix its llama.cpp servers declare, and notes nothing."""
    with TestServer(owned_by="llamacpp", apply_template_status=status) as a, \
            TestServer(owned_by="llamacpp", apply_template_status=status) as b:
        router = parse_model_spec(f"openai:test-model@{a.base_url},{b.base_url}")
        assert isinstance(router, RouterModel)
        asyncio.run(router.start())
        try:
            notes = router.take_notes()
        finally:
            asyncio.run(router.close())
    assert isinstance(router.capabilities, frozenset)
    assert router.can("template") and router.can("prefix") and notes == []


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_endpoint_back_without_what_the_pool_declared_stays_out():
    """Down at start, so the pool declared the template of the others; when it answers again
    without /apply-template it is kept out of rotation (probed again later), saying why."""
    port = _free_port()

    async def go(a: TestServer) -> str:
        router = parse_model_spec(f"openai:test-model@{a.base_url},http://127.0.0.1:{port}/v1")
        assert isinstance(router, RouterModel)
        await router.start()
        try:
            assert router.can("template")
            late = router._eps[1]
            assert not late.health.up
            with TestServer(owned_by="llamacpp", port=port):
                deadline = time.monotonic() + 20
                while "lacks" not in (late.health.reason or "") and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
                assert not late.health.up
                assert await router.apply_template(MESSAGES) == template(MESSAGES)
            return late.health.reason or ""
        finally:
            await router.close()

    with TestServer(owned_by="llamacpp", chat_template=template) as a:
        reason = asyncio.run(go(a))
    assert reason == "lacks prefix, template: the server has no POST /apply-template (HTTP 404)"
