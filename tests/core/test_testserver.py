"""The OpenAI-compatible test server, exercised over real sockets with a real aiohttp client."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
import urllib.request
from typing import Any

import aiohttp
import pytest

from mindprobe.errors import DataError
from mindprobe.testing import TestServer
from mindprobe.testing.faults import FaultPlan
from mindprobe.testing.server import _parser, config_from_args
from mindprobe.testing.tokens import PrefixCache, reply_tokens


def chat_body(text: str = "hi there", model: str = "test-model", **extra: Any) -> dict:
    return {"model": model, "messages": [{"role": "user", "content": text}], **extra}


async def _post(url: str, payload: Any, headers: dict | None, timeout: float) -> tuple:
    client_timeout = aiohttp.ClientTimeout(total=timeout)
    async with (
        aiohttp.ClientSession(timeout=client_timeout) as session,
        session.post(url, json=payload, headers=headers) as resp,
    ):
        return resp.status, dict(resp.headers), await resp.text()


def post(
    srv: TestServer, path: str, payload: Any, headers: dict | None = None, timeout: float = 10
) -> tuple[int, dict, Any]:
    """POST from a fresh event loop in this (main) thread; returns status, headers, parsed JSON."""
    status, resp_headers, text = asyncio.run(_post(srv.base_url + path, payload, headers, timeout))
    return status, resp_headers, json.loads(text)


def root(srv: TestServer) -> str:
    """Server root; the control endpoints (/stats, /reset-stats) live outside /v1."""
    return srv.base_url.removesuffix("/v1")


def get(srv: TestServer, path: str, headers: dict | None = None) -> tuple[int, Any]:
    req = urllib.request.Request(root(srv) + path, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


@pytest.fixture(scope="module")
def server():
    with TestServer(models=["test-model", "other-model"]) as srv:
        yield srv


def test_chat_completion_shape_and_usage(server):
    status, _, body = post(server, "/chat/completions", chat_body("hi there"))
    assert status == 200
    assert body["id"].startswith("chatcmpl-") and body["object"] == "chat.completion"
    assert isinstance(body["created"], int) and body["model"] == "test-model"
    choice = body["choices"][0]
    assert choice["message"] == {"role": "assistant", "content": "OK", "refusal": None}
    assert choice["finish_reason"] == "stop" and choice["logprobs"] is None
    # prompt is rendered "user: hi there" -> 3 whitespace words; "OK" is one token
    assert body["usage"] == {
        "prompt_tokens": 3,
        "completion_tokens": 1,
        "total_tokens": 4,
        "prompt_tokens_details": {"cached_tokens": 0},
    }


def test_completions_shape_and_usage(server):
    status, _, body = post(server, "/completions", {"model": "other-model", "prompt": "a b c d"})
    assert status == 200
    assert body["object"] == "text_completion" and body["model"] == "other-model"
    assert body["choices"][0]["text"] == "OK" and body["choices"][0]["finish_reason"] == "stop"
    assert body["usage"]["prompt_tokens"] == 4 and body["usage"]["total_tokens"] == 5


def test_logprobs_shapes():
    with TestServer(reply="The answer is 4") as srv:
        _, _, chat = post(srv, "/chat/completions", chat_body(logprobs=True, top_logprobs=3))
        _, _, comp = post(
            srv, "/completions", {"model": "test-model", "prompt": "Q:", "logprobs": 2}
        )
    content = chat["choices"][0]["logprobs"]["content"]
    assert "".join(t["token"] for t in content) == "The answer is 4"
    for entry in content:
        assert entry["bytes"] == list(entry["token"].encode())
        assert [alt["token"] for alt in entry["top_logprobs"]][0] == entry["token"]
        assert len(entry["top_logprobs"]) == 3
        assert sum(2.718281828 ** alt["logprob"] for alt in entry["top_logprobs"]) < 1
    legacy = comp["choices"][0]["logprobs"]
    assert "".join(legacy["tokens"]) == "The answer is 4"
    assert len(legacy["token_logprobs"]) == len(legacy["tokens"]) == len(legacy["text_offset"])
    assert all(len(top) == 2 for top in legacy["top_logprobs"])
    assert legacy["text_offset"][0] == len("Q:")


def test_max_tokens_truncates_with_length_finish():
    with TestServer(reply="one two three four") as srv:
        _, _, body = post(srv, "/chat/completions", chat_body(max_tokens=2))
    assert body["choices"][0]["message"]["content"] == "one two"
    assert body["choices"][0]["finish_reason"] == "length"
    assert body["usage"]["completion_tokens"] == 2


def test_models_list_and_unknown_model(server):
    status, listing = get(server, "/v1/models")
    assert status == 200 and [m["id"] for m in listing["data"]] == ["test-model", "other-model"]
    status, _, body = post(server, "/chat/completions", chat_body(model="gpt-nope"))
    assert status == 404
    assert body["error"]["message"] == "The model `gpt-nope` does not exist"
    assert body["error"]["type"] == "invalid_request_error"
    assert body["error"]["code"] == "model_not_found"


def test_bad_requests_get_openai_error_bodies(server):
    status, _, body = post(server, "/chat/completions", chat_body(stream=True))
    assert status == 400 and body["error"]["param"] == "stream"
    status, _, body = post(server, "/chat/completions", {"model": "test-model", "messages": []})
    assert status == 400 and "messages" in body["error"]["message"]
    status, _, body = post(server, "/completions", {"model": "test-model", "prompt": 5})
    assert status == 400 and body["error"]["type"] == "invalid_request_error"


def test_api_key_required():
    with TestServer(api_key="sekrit") as srv:
        status, _, body = post(srv, "/chat/completions", chat_body())
        assert status == 401 and body["error"]["code"] == "invalid_api_key"
        wrong = {"Authorization": "Bearer nope"}
        assert post(srv, "/chat/completions", chat_body(), headers=wrong)[0] == 401
        assert get(srv, "/v1/models")[0] == 401
        good = {"Authorization": "Bearer sekrit"}
        assert post(srv, "/chat/completions", chat_body(), headers=good)[0] == 200
        assert get(srv, "/v1/models", headers=good)[0] == 200
        assert srv.stats()["rejected"] == {"401": 3}


def test_echo_headers_repeats_them_in_replies_and_errors():
    """`echo_headers` (`--echo-headers`): a server that sends back what it was sent, the
    header a client must mask before it records or caches a reply or an error."""
    auth = {"Authorization": "Bearer echo-me-123"}
    with TestServer(echo_headers=["Authorization"], reply="OK") as srv:
        status, _, body = post(srv, "/chat/completions", chat_body(), headers=auth)
        assert body["choices"][0]["message"]["content"] == "Authorization: Bearer echo-me-123 OK"
        assert post(srv, "/chat/completions", chat_body())[2]["choices"][0]["message"][
            "content"] == "OK"  # nothing sent, nothing echoed
    with TestServer(echo_headers=["Authorization"], fault_500=1.0) as srv:
        status, _, body = post(srv, "/chat/completions", chat_body(), headers=auth)
        assert status == 500 and body["error"]["message"].startswith(
            "Authorization: Bearer echo-me-123 ")
    args = _parser().parse_args(["--echo-headers", "Authorization, X-Api-Key"])
    assert config_from_args(args).echo_headers == ["Authorization", "X-Api-Key"]


def test_fault_500_and_429_with_retry_after():
    with TestServer(fault_500=1.0) as srv:
        status, _, body = post(srv, "/chat/completions", chat_body())
        assert status == 500 and body["error"]["type"] == "server_error"
        assert srv.stats()["faults"]["500"] == 1
    with TestServer(fault_429=1.0, retry_after=7) as srv:
        status, headers, body = post(srv, "/completions", {"model": "test-model", "prompt": "x"})
        assert status == 429 and headers["Retry-After"] == "7"
        assert body["error"]["code"] == "rate_limit_exceeded"


def test_fault_drop_is_a_connection_error():
    with TestServer(fault_drop=1.0) as srv:
        with pytest.raises(aiohttp.ClientConnectionError):
            post(srv, "/chat/completions", chat_body())
        assert srv.stats()["faults"]["drop"] == 1 and srv.stats()["served_ok"] == 0


def test_fault_malformed_is_a_json_error():
    with TestServer(fault_malformed=1.0) as srv:
        status, _, text = asyncio.run(
            _post(srv.base_url + "/chat/completions", chat_body(), None, 5)
        )
    assert status == 200
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)


def test_fault_timeout_hangs_past_client_timeout_and_stops_quickly():
    srv = TestServer(fault_timeout=1.0, hang_seconds=30).start()
    try:
        started = time.monotonic()
        with pytest.raises(asyncio.TimeoutError):
            post(srv, "/chat/completions", chat_body(), timeout=0.3)
        assert time.monotonic() - started < 5
        assert srv.stats()["faults"]["timeout"] == 1
    finally:
        stopping = time.monotonic()
        srv.stop()
    assert time.monotonic() - stopping < 5


def test_fail_first_n_then_serves():
    with TestServer(fail_first_n=2) as srv:
        statuses = [post(srv, "/chat/completions", chat_body())[0] for _ in range(4)]
        stats = srv.stats()
    assert statuses == [500, 500, 200, 200]
    assert stats["faults"]["fail_first_n"] == 2 and stats["served_ok"] == 2


def test_fault_rates_are_seeded_and_reproducible():
    def statuses(seed: int) -> list[int]:
        with TestServer(fault_500=0.3, fault_429=0.2, seed=seed) as srv:
            return [
                post(srv, "/completions", {"model": "test-model", "prompt": "p"})[0]
                for _ in range(60)
            ]

    first = statuses(11)
    assert first == statuses(11)
    assert first != statuses(12)
    assert {500, 429, 200} == set(first)


def test_fault_plan_bands_match_rates():
    plan = FaultPlan({"500": 0.25, "drop": 0.25}, seed=0)
    kinds = [plan.decide() for _ in range(4000)]
    assert abs(kinds.count("500") / 4000 - 0.25) < 0.03
    assert abs(kinds.count(None) / 4000 - 0.5) < 0.03
    with pytest.raises(ValueError, match="add up"):
        FaultPlan({"500": 0.7, "429": 0.7})


def test_script_first_match_wins_with_fallback(tmp_path):
    script = [
        {"match": r"capital of France", "reply": "Paris"},
        {"match": r"capital", "reply": "Somewhere"},
    ]
    with TestServer(script=script, reply="dunno") as srv:
        replies = [
            post(srv, "/chat/completions", chat_body(q))[2]["choices"][0]["message"]["content"]
            for q in ("What is the capital of France?", "capital of Peru?", "2+2?")
        ]
    assert replies == ["Paris", "Somewhere", "dunno"]
    path = tmp_path / "script.jsonl"
    path.write_text('{"match": "^Q", "reply": "A"}\n\n{"match": "x"}\n')
    with pytest.raises(DataError, match=r"script\.jsonl, line 3"):
        TestServer(script=path)


def test_echo_and_callable_responders():
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": [{"type": "text", "text": "last question"}]},
    ]
    with TestServer(echo=True) as srv:
        _, _, chat = post(srv, "/chat/completions", {"model": "test-model", "messages": messages})
        _, _, comp = post(srv, "/completions", {"model": "test-model", "prompt": "say this"})
    assert chat["choices"][0]["message"]["content"] == "last question"
    assert comp["choices"][0]["text"] == "say this"
    with TestServer(responder=lambda req: f"{req['model']}:{req['temperature']}") as srv:
        _, _, body = post(srv, "/chat/completions", chat_body(temperature=0.5))
    assert body["choices"][0]["message"]["content"] == "test-model:0.5"
    with TestServer(responder=lambda req: 1 / 0) as srv:
        status, _, body = post(srv, "/chat/completions", chat_body())
    assert status == 500 and "ZeroDivisionError" in body["error"]["message"]
    with pytest.raises(ValueError, match="one reply mode"):
        TestServer(echo=True, script=[])


def test_stats_counters_and_reset():
    with TestServer(fail_first_n=1) as srv:
        post(srv, "/chat/completions", chat_body())
        post(srv, "/chat/completions", chat_body())
        post(srv, "/completions", {"model": "test-model", "prompt": "x"})
        post(srv, "/completions", {"model": "missing", "prompt": "x"})
        get(srv, "/v1/models")
        status, stats = get(srv, "/stats")
        assert status == 200 and stats == srv.stats()
        assert stats["requests"] == {
            "/v1/chat/completions": 2,
            "/v1/completions": 2,
            "/v1/models": 1,
        }
        assert stats["requests_total"] == 5 and stats["served_ok"] == 2
        assert stats["faults"]["fail_first_n"] == 1 and stats["faults_total"] == 1
        assert stats["rejected"] == {"404": 1}
        with urllib.request.urlopen(
            urllib.request.Request(root(srv) + "/reset-stats", method="POST"), timeout=5
        ) as resp:
            assert json.loads(resp.read())["requests_total"] == 0
        assert srv.stats()["served_ok"] == 0


def test_stats_readable_from_inside_a_running_loop():
    async def scenario(srv: TestServer) -> int:
        await _post(srv.base_url + "/chat/completions", chat_body(), None, 5)
        return srv.stats()["served_ok"]

    with TestServer() as srv:
        assert asyncio.run(scenario(srv)) == 1


def test_serves_a_client_running_in_a_subprocess():
    code = (
        "import json, sys, urllib.request\n"
        "body = json.dumps({'model': 'test-model', 'prompt': 'hello'}).encode()\n"
        "req = urllib.request.Request(sys.argv[1] + '/completions', data=body)\n"
        "print(json.loads(urllib.request.urlopen(req, timeout=5).read())['choices'][0]['text'])\n"
    )
    with TestServer(echo=True) as srv:
        proc = subprocess.run(
            [sys.executable, "-c", code, srv.base_url], capture_output=True, text=True, timeout=30
        )
    assert proc.stdout.strip() == "hello", proc.stderr


def test_latency_is_applied():
    with TestServer(latency=0.2, latency_jitter=0.05) as srv:
        started = time.monotonic()
        post(srv, "/chat/completions", chat_body())
    assert time.monotonic() - started >= 0.2


def test_prefix_cache_reports_longest_common_prefix():
    def cached(srv: TestServer, prompt: str) -> int:
        _, _, body = post(srv, "/completions", {"model": "test-model", "prompt": prompt})
        return body["usage"]["prompt_tokens_details"]["cached_tokens"]

    with TestServer(simulate_prefix_cache=True) as srv:
        assert cached(srv, "shared system prompt then question one") == 0
        assert cached(srv, "shared system prompt then question two") == 5
        assert cached(srv, "shared system prompt then question one") == 6
        assert cached(srv, "unrelated") == 0
    with TestServer() as srv:
        cached(srv, "a b c")
        assert cached(srv, "a b c") == 0


def test_token_helpers():
    assert reply_tokens(" a  bc d ") == [" a", "  bc", " d", " "]
    cache = PrefixCache()
    assert cache.observe(["a", "b", "c"]) == 0
    assert cache.observe(["a", "b"]) == 2
    assert cache.observe(["a", "b", "c", "d"]) == 3


def test_cli_prints_ready_and_serves_until_sigterm():
    cmd = [
        sys.executable,
        "-m",
        "mindprobe.testing.server",
        "--port",
        "0",
        "--echo",
        "--models",
        "m1,m2",
        "--fail-first-n",
        "1",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("READY http://127.0.0.1:") and line.rstrip().endswith("/v1")
        url = line.split()[1]

        def call() -> tuple[int, Any]:
            body = json.dumps({"model": "m2", "messages": [{"role": "user", "content": "ping"}]})
            req = urllib.request.Request(
                url + "/chat/completions",
                data=body.encode(),
                headers={"Content-Type": "application/json"},
            )
            try:
                with urllib.request.urlopen(req, timeout=5) as resp:
                    return resp.status, json.loads(resp.read())
            except urllib.error.HTTPError as err:
                return err.code, None

        assert call()[0] == 500
        status, body = call()
        assert status == 200 and body["choices"][0]["message"]["content"] == "ping"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        assert proc.stderr.read() == ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_cli_reports_bad_script_file(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    proc = subprocess.run(
        [sys.executable, "-m", "mindprobe.testing.server", "--script", str(bad)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2 and "bad.jsonl, line 1" in proc.stderr
