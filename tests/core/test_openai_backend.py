"""The HTTP backend against a real OpenAI-compatible server on 127.0.0.1 (no client patching)."""

from __future__ import annotations

import asyncio
import socket

import pytest

from mindprobe.errors import ModelError
from mindprobe.models import parse_model_spec
from mindprobe.models.base import CallContext, Request, TransientError
from mindprobe.models.openai_compat import OpenAICompatModel
from mindprobe.models.wire import normalise_base_url
from mindprobe.testing import TestServer


def _model(url: str, **kw) -> OpenAICompatModel:
    kw.setdefault("backoff_base", 0.01)
    kw.setdefault("backoff_max", 0.05)
    return OpenAICompatModel("test-model", url, kw.pop("api_key", None), spec="t", label="t",
                             grammar="llama", **kw)


def _ask(model: OpenAICompatModel, n: int = 1, **req) -> list:
    async def go():
        await model.start()
        try:
            return await asyncio.gather(*(
                model.complete(Request(messages=[{"role": "user", "content": f"q{i}"}], **req),
                               CallContext("i", i, 0))
                for i in range(n)
            ))
        finally:
            await model.close()
    return asyncio.run(go())


def test_chat_and_usage():
    with TestServer(reply="TRUE") as srv:
        (c,) = _ask(_model(srv.base_url))
    assert c.text == "TRUE"
    assert c.prompt_tokens > 0 and c.completion_tokens > 0


def test_completions_endpoint_for_raw_prompts():
    with TestServer(echo=True) as srv:
        m = _model(srv.base_url)

        async def go():
            await m.start()
            try:
                return await m.complete(Request(prompt="hello world"), CallContext("i", 0, 0))
            finally:
                await m.close()
        c = asyncio.run(go())
        assert srv.stats()["requests"]["/v1/completions"] == 1
    assert "hello world" in c.text


@pytest.mark.slow
def test_retries_through_injected_faults():
    # every fault kind at once, 50% of requests: all 40 requests still succeed
    with TestServer(fault_500=0.1, fault_429=0.1, fault_drop=0.1, fault_malformed=0.1,
                    fault_timeout=0.1, hang_seconds=5, retry_after=0, seed=3) as srv:
        out = _ask(_model(srv.base_url, max_attempts=12, timeout=1.0), n=40)
        stats = srv.stats()
    assert all(c.text == "OK" for c in out)
    assert all(stats["faults"][k] > 0 for k in ("500", "429", "drop", "malformed", "timeout")), stats


def test_retry_after_is_honoured():
    import time

    with TestServer(fault_429=1.0, retry_after=1) as srv:
        m = _model(srv.base_url, max_attempts=2)
        t0 = time.perf_counter()
        with pytest.raises(TransientError, match="429"):
            _ask(m)
        assert time.perf_counter() - t0 >= 0.95  # waited Retry-After, not the 10 ms backoff


def test_gives_up_after_bounded_attempts():
    with TestServer(fault_500=1.0) as srv:
        with pytest.raises(TransientError, match="after 3 attempts"):
            _ask(_model(srv.base_url, max_attempts=3))
        assert srv.stats()["faults"]["500"] == 3


@pytest.mark.parametrize("fault", ["fault_500", "fault_malformed"])
def test_a_server_that_fails_every_request_counts_as_dead(fault):
    """Not only refused connections: 5xx or broken bodies on every request, with no good
    answer for a while, stop the run instead of retrying every item."""
    with TestServer(**{fault: 1.0}) as srv:
        model = _model(srv.base_url, max_attempts=6)
        model.retry.dead_streak, model.retry.broken_window = 8, 0.05
        with pytest.raises(ModelError, match="stopped answering .* failed requests in a row"):
            _ask(model, n=8)


def test_rate_limits_alone_never_count_as_a_dead_server():
    with TestServer(fault_429=1.0, retry_after=0) as srv:
        model = _model(srv.base_url, max_attempts=3)
        model.retry.dead_streak, model.retry.refused_window, model.retry.broken_window = (
            2, 0.0, 0.0)
        with pytest.raises(TransientError, match="after 3 attempts"):
            _ask(model, n=4)


def test_a_server_still_loading_with_retry_after_is_waited_for():
    """503 + Retry-After (llama.cpp or vLLM loading, an overloaded API) is ridden out by the
    retries however long the streak: the server said when to come back."""
    from aiohttp import web

    calls = {"n": 0}

    async def chat(request):
        calls["n"] += 1
        if calls["n"] <= 12:
            return web.json_response({"error": "loading"}, status=503,
                                     headers={"Retry-After": "0"})
        return web.json_response({"choices": [{"message": {"content": "OK"},
                                               "finish_reason": "stop"}], "usage": {}})

    async def models(request):
        return web.json_response({"data": []})

    async def go():
        app = web.Application()
        app.router.add_post("/v1/chat/completions", chat)
        app.router.add_get("/v1/models", models)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]
        model = _model(f"http://127.0.0.1:{port}/v1", max_attempts=10)
        model.retry.dead_streak, model.retry.refused_window, model.retry.broken_window = (
            2, 0.0, 0.0)
        await model.start()
        try:
            return await asyncio.gather(*(model.complete(
                Request(messages=[{"role": "user", "content": "q"}]), CallContext("i", i, 0))
                for i in range(4)))
        finally:
            await model.close()
            await runner.cleanup()

    assert [c.text for c in asyncio.run(go())] == ["OK"] * 4


def test_unknown_model_fails_fast_listing_models():
    with TestServer(models=["a", "b"]) as srv:
        with pytest.raises(ModelError, match="unknown model 'test-model'.*a, b"):
            _ask(_model(srv.base_url))


def test_bad_key_fails_fast():
    with TestServer(api_key="right") as srv:
        with pytest.raises(ModelError, match="401"):
            _ask(_model(srv.base_url, api_key="wrong"))
        (c,) = _ask(_model(srv.base_url, api_key="right"))
        assert c.text == "OK"


def test_unreachable_server_is_one_clear_error():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with pytest.raises(ModelError, match="cannot reach the model server"):
        _ask(_model(f"http://127.0.0.1:{port}/v1"))


def test_grammar_and_logprobs_in_body():
    seen = []

    def responder(body):
        seen.append(body)
        return "TRUE"

    with TestServer(responder=responder) as srv:
        _ask(_model(srv.base_url), choices=["TRUE", "FALSE"], constrain=True, logprobs=3)
    assert seen[0]["grammar"] == 'root ::= "TRUE" | "FALSE"'
    assert seen[0]["logprobs"] is True and seen[0]["top_logprobs"] == 3


def test_spec_parsing(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelError, match="OPENAI_API_KEY"):  # asked for at start: a dry run
        asyncio.run(parse_model_spec("openai:gpt-4o").start())  # needs none
    with pytest.raises(ModelError, match="unknown model spec"):
        parse_model_spec("gpt4")
    with pytest.raises(ModelError, match="GGUF file not found"):
        parse_model_spec("local:/nonexistent.gguf")
    m = parse_model_spec("openai:llama3@localhost:8000")
    assert m.base_url == "http://localhost:8000/v1" and m.label == "llama3"  # the model, not its address
    assert normalise_base_url("http://h:1/v1/") == "http://h:1/v1"


def test_api_key_never_in_identity(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-123")
    m = parse_model_spec("openai:gpt-4o-mini")
    assert "sk-secret-123" not in repr(m.identity()) + repr(m.describe())


@pytest.mark.parametrize("url", ["ftp://h/v1", "127.0.0.1:99999", "http://:80", "h:port"])
def test_a_bad_url_is_named_as_such(url):
    with pytest.raises(ModelError, match="bad server URL"):
        normalise_base_url(url)
