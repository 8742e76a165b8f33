"""The test server's behaviour: configuration, shared state and the request handlers."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from mindprobe.testing.faults import FaultPlan
from mindprobe.testing.llama_native import NATIVE_PATH, NativeCompletion
from mindprobe.testing.protocol import (
    CHAT,
    CHAT_PATH,
    COMPLETIONS,
    COMPLETIONS_PATH,
    JSON_TYPE,
    MODELS_PATH,
    ClientError,
    Endpoint,
    Prompt,
    error_response,
)
from mindprobe.testing.responders import Responder
from mindprobe.testing.shapes import shape_content, window_error
from mindprobe.testing.stats import Stats
from mindprobe.testing.tokens import PrefixCache, prompt_tokens, reply_tokens


@dataclass
class ServerConfig:
    """Everything that shapes the server's behaviour; the keyword arguments of TestServer."""

    models: Sequence[str] = ("test-model",)
    api_key: str | None = None
    reply: str = "OK"
    script: Sequence[Mapping[str, str]] | str | Path | None = None
    echo: bool = False
    responder: Callable[[dict[str, Any]], str] | None = None
    latency: float = 0.0
    latency_jitter: float = 0.0
    fault_500: float = 0.0
    fault_429: float = 0.0
    fault_timeout: float = 0.0
    fault_drop: float = 0.0
    fault_malformed: float = 0.0
    fail_first_n: int = 0
    retry_after: int = 1
    hang_seconds: float = 30.0
    seed: int = 0
    simulate_prefix_cache: bool = False
    #: What /v1/models says owns the models (servers are recognised by it: "llamacpp", "vllm").
    owned_by: str = "mindprobe-test"
    #: What the server says it serves, as llama.cpp does (`/props` `model_path`, the
    #: `/v1/models` card's `meta.size`) and vLLM does (the card's `max_model_len`): two servers
    #: that differ here serve different models under one name.
    model_file: str | None = None
    #: /props `chat_template`, as llama.cpp reports the model's (None: not reported).
    props_chat_template: str | None = None
    model_size: int | None = None
    max_model_len: int | None = None
    #: Act like a server with a reasoning parser (vLLM `--reasoning-parser`, llama.cpp
    #: `--reasoning-format deepseek`): a reply's leading `<think>…</think>` block is sent as
    #: `message.reasoning_content` (content null while it is still open when max_tokens cuts
    #: the reply) and counted in `usage.completion_tokens_details.reasoning_tokens`. Without
    #: it, a `<think>` block stays in the content, as servers without a parser send it.
    reasoning_parser: bool = False
    #: Requests served at once (0: unlimited); the rest queue, like a server of fixed capacity.
    max_concurrency: int = 0
    #: Keep one entry per answered completion in /stats (`log`): which conversation (a digest of
    #: its first two messages, or of the prompt's first 200 characters), its length and tokens.
    request_log: bool = False
    #: llama.cpp's `POST /apply-template` ({"messages"} -> {"prompt"}), served when given, and
    #: `POST /tokenize` ({"content", "add_special"} -> {"tokens"}): a chat template (messages
    #: -> prompt text) and a tokenizer ((text, add_special) -> token ids). Without a tokenizer
    #: /tokenize counts exactly as `usage` does (a word is a token), and also takes vLLM's
    #: forms ({"prompt"}, or {"messages"}: the conversation as usage renders it).
    chat_template: Callable[[list[dict[str, Any]]], str] | None = None
    tokenizer: Callable[[str, bool], list[int]] | None = None
    #: What `POST /apply-template` answers instead of a prompt (e.g. 405: a route without the
    #: method; 500: a server in trouble; 0: the connection dropped), served even without a
    #: chat template.
    apply_template_status: int | None = None
    #: Request headers (e.g. `Authorization`) the server repeats at the start of every reply
    #: and error message, as a careless proxy or a debugging server does: what a client must
    #: mask before it records or caches what came back.
    echo_headers: Sequence[str] = ()
    #: How a chat reply's text is sent (`testing.shapes.CONTENT_FORMS`): a string, a list of
    #: parts, null beside `reasoning_content`, or forms no client can read (integer, object).
    content_form: str = "string"
    #: Usage fields sent instead of the counted ones (e.g. {"prompt_tokens": 1e30}).
    usage_override: Mapping[str, Any] | None = None
    #: A context window, stated as llama.cpp does (`/props` n_ctx) and enforced: a request
    #: whose prompt plus max_tokens exceeds it is refused with HTTP 400 (and logged).
    n_ctx: int | None = None


def conversation_key(body: dict[str, Any]) -> str:
    """Which conversation a request belongs to: a digest of its first two messages (system and
    first user turn), or of the first 200 characters of a raw prompt."""
    import hashlib

    head = body.get("messages", [])[:2] if "messages" in body else str(body.get("prompt"))[:200]
    return hashlib.sha1(json.dumps(head, sort_keys=True).encode()).hexdigest()[:12]


class Service:
    """Request handlers plus the state they share; lives entirely on one event loop."""

    def __init__(self, config: ServerConfig) -> None:
        if config.latency < 0 or config.latency_jitter < 0 or config.hang_seconds < 0:
            raise ValueError("latency, latency_jitter and hang_seconds must be >= 0")
        if isinstance(config.models, str) or not config.models:
            raise ValueError(f"models must be a non-empty list of names, got {config.models!r}")
        self.models = frozenset(config.models)
        self.auth = f"Bearer {config.api_key}" if config.api_key else None
        self.responder = Responder(config.reply, config.script, config.echo, config.responder)
        rates = {
            "500": config.fault_500,
            "429": config.fault_429,
            "timeout": config.fault_timeout,
            "drop": config.fault_drop,
            "malformed": config.fault_malformed,
        }
        self.faults = FaultPlan(rates, config.fail_first_n, config.seed)
        self.prefix_cache = PrefixCache() if config.simulate_prefix_cache else None
        self.reasoning_parser = config.reasoning_parser
        self.latency, self.jitter = config.latency, config.latency_jitter
        self.hang = config.hang_seconds
        self.retry_after = {"Retry-After": str(config.retry_after)}
        self.jitter_rng = random.Random(f"{config.seed}:latency")
        self.stats = Stats()
        if config.request_log:
            self.stats.log = []
        self.capacity = asyncio.Semaphore(config.max_concurrency) if config.max_concurrency \
            else None
        self.ids = itertools.count(1)
        cards = [
            {"id": m, "object": "model", "created": 0, "owned_by": config.owned_by,
             **({"max_model_len": config.max_model_len} if config.max_model_len else {}),
             **({"meta": {"size": config.model_size}} if config.model_size else {})}
            for m in config.models
        ]
        self.models_body = json.dumps({"object": "list", "data": cards}).encode()
        self.chat_template, self.tokenizer = config.chat_template, config.tokenizer
        self.apply_template_status = config.apply_template_status
        self.owned_by = config.owned_by
        if isinstance(config.echo_headers, str):
            raise ValueError("echo_headers must be a list of header names")
        self.echo_headers = tuple(config.echo_headers)
        props = {**({"model_path": config.model_file} if config.model_file else {}),
                 **({"default_generation_settings": {"n_ctx": config.n_ctx}}
                    if config.n_ctx else {}),
                 **({"chat_template": config.props_chat_template}
                    if config.props_chat_template is not None else {})}
        self.props_body = json.dumps(props).encode() if props else None
        self.content_form, self.usage_override = config.content_form, config.usage_override
        self.n_ctx = config.n_ctx or config.max_model_len
        #: Requests refused because they did not fit `n_ctx`.
        self.too_long = 0

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024**2)
        app.router.add_post(CHAT_PATH, self.chat)
        app.router.add_post(COMPLETIONS_PATH, self.completions)
        app.router.add_get(MODELS_PATH, self.list_models)
        app.router.add_get("/props", self.props)
        app.router.add_get("/stats", self.get_stats)
        app.router.add_post("/reset-stats", self.reset_stats)
        if self.chat_template is not None or self.apply_template_status is not None:
            app.router.add_post("/apply-template", self.apply_template)
        app.router.add_post("/tokenize", self.tokenize)
        if self.owned_by == "llamacpp":
            app.router.add_post(NATIVE_PATH, NativeCompletion(self.stats, self.responder,
                                                              self.tokenizer).handle)
        return app

    def _authorize(self, request: web.Request) -> None:
        if "Authorization" in request.headers:
            self.stats.credentials.add(f"Authorization: {request.headers['Authorization']}")
        if request.query_string:
            self.stats.credentials.add(f"?{request.query_string}")
        if self.auth is not None and request.headers.get("Authorization") != self.auth:
            raise ClientError(
                401,
                "Incorrect or missing API key; send 'Authorization: Bearer <key>'",
                code="invalid_api_key",
            )

    async def list_models(self, request: web.Request) -> web.Response:
        self.stats.requests[MODELS_PATH] += 1
        try:
            self._authorize(request)
        except ClientError as exc:
            self.stats.reject(exc.status)
            return error_response(exc.status, exc.message, code=exc.code)
        return web.Response(body=self.models_body, content_type=JSON_TYPE)

    async def apply_template(self, request: web.Request) -> web.Response:
        body = json.loads(await request.read())
        if self.apply_template_status == 0 and request.transport is not None:
            request.transport.abort()
            await asyncio.Event().wait()  # cancelled by aiohttp once the connection is lost
        if self.apply_template_status is not None:
            return error_response(self.apply_template_status, "not served here")
        assert self.chat_template is not None
        return web.json_response({"prompt": self.chat_template(body["messages"])})

    async def tokenize(self, request: web.Request) -> web.Response:
        body = json.loads(await request.read())
        if self.tokenizer is not None:  # llama.cpp's: no tokens for a body without "content"
            tokens = self.tokenizer(str(body.get("content", "")),
                                    bool(body.get("add_special", False)))
            return web.json_response({"tokens": tokens})
        try:
            text = CHAT.parse(body).text if "messages" in body else \
                str(body.get("content", body.get("prompt", "")))
        except ClientError as exc:
            return error_response(exc.status, exc.message, code=exc.code)
        ids = [zlib.crc32(t.encode()) % 50_000 for t in prompt_tokens(text)]
        return web.json_response({"tokens": ids, "count": len(ids)})

    async def props(self, request: web.Request) -> web.Response:
        """llama.cpp's `/props` (only where a model file is configured; else 404 like vLLM)."""
        if self.props_body is None:
            return error_response(404, "File Not Found", code="not_found")
        return web.Response(body=self.props_body, content_type=JSON_TYPE)

    async def get_stats(self, request: web.Request) -> web.Response:
        return web.json_response(self.stats.snapshot())

    async def reset_stats(self, request: web.Request) -> web.Response:
        return web.json_response(self.stats.reset())

    async def chat(self, request: web.Request) -> web.StreamResponse:
        return await self._complete(request, CHAT)

    async def completions(self, request: web.Request) -> web.StreamResponse:
        return await self._complete(request, COMPLETIONS)

    async def _parse(self, request: web.Request, endpoint: Endpoint) -> tuple[dict, str, Prompt]:
        self._authorize(request)
        try:
            body = json.loads(await request.read())
        except ValueError as exc:
            raise ClientError(400, f"request body is not valid JSON: {exc}") from exc
        if not isinstance(body, dict):
            raise ClientError(400, "request body must be a JSON object")
        if body.get("stream"):
            raise ClientError(
                400,
                "streaming is not supported by this test server; send 'stream': false",
                param="stream",
            )
        model = body.get("model")
        if not isinstance(model, str):
            raise ClientError(400, "you must provide a model parameter", param="model")
        if model not in self.models:
            raise ClientError(404, f"The model `{model}` does not exist", code="model_not_found")
        return body, model, endpoint.parse(body)

    async def _complete(self, request: web.Request, endpoint: Endpoint) -> web.StreamResponse:
        if self.capacity is None:
            return await self._complete_now(request, endpoint)
        async with self.capacity:
            return await self._complete_now(request, endpoint)

    async def _complete_now(self, request: web.Request, endpoint: Endpoint
                            ) -> web.StreamResponse:
        self.stats.requests[endpoint.path] += 1
        try:
            body, model, prompt = await self._parse(request, endpoint)
        except ClientError as exc:
            self.stats.reject(exc.status)
            return error_response(exc.status, self._echo(request) + exc.message, code=exc.code,
                                  param=exc.param)
        fault = self.faults.decide()
        if fault is not None:
            self.stats.faults[fault] += 1
        delay = self.latency + (self.jitter_rng.uniform(0, self.jitter) if self.jitter else 0.0)
        if delay:
            await asyncio.sleep(delay)
        if fault == "timeout":
            await asyncio.sleep(self.hang)  # then answer normally, long after a sane client gave up
        elif fault is not None:
            return await self._inject(fault, request, endpoint)
        try:
            text = self._echo(request) + self.responder(body, prompt.cue)
        except Exception as exc:  # a broken custom responder must show up in the test, not hang
            return error_response(500, f"responder failed: {exc!r}", kind="server_error")
        return self._reply(text, model, prompt, endpoint, body)

    def _echo(self, request: web.Request) -> str:
        """The headers to echo (`echo_headers`), as `Name: value ` each, or nothing."""
        return "".join(f"{h}: {request.headers[h]} " for h in self.echo_headers
                       if h in request.headers)

    def _reply(self, text: str, model: str, prompt: Prompt, endpoint: Endpoint,
               body: dict[str, Any] | None = None) -> web.Response:
        refused = window_error(len(prompt_tokens(prompt.text)), prompt.max_tokens, self.n_ctx)
        if refused is not None:
            self.stats.reject(400)
            return error_response(400, refused, code="context_length_exceeded")
        pieces, finish = reply_tokens(text), "stop"
        if prompt.max_tokens is not None and len(pieces) > prompt.max_tokens:
            pieces, finish = pieces[: prompt.max_tokens], "length"
        tokens = prompt_tokens(prompt.text)
        cached = self.prefix_cache.observe(tokens) if self.prefix_cache is not None else 0
        usage: dict[str, Any] = {
            "prompt_tokens": len(tokens),
            "completion_tokens": len(pieces),
            "total_tokens": len(tokens) + len(pieces),
            "prompt_tokens_details": {"cached_tokens": cached},
        }
        choice = endpoint.choice(pieces, finish, prompt)
        if self.reasoning_parser and endpoint is CHAT:
            thinking = _split_thinking(choice["message"], pieces)
            usage["completion_tokens_details"] = {"reasoning_tokens": thinking}
        if endpoint is CHAT:
            shape_content(choice["message"], self.content_form)
        usage.update(self.usage_override or {})
        payload = {
            "id": f"{endpoint.id_prefix}-{next(self.ids)}",
            "object": endpoint.object_name,
            "created": int(time.time()),
            "model": model,
            "choices": [choice],
            "usage": usage,
            "system_fingerprint": "fp_mindprobe_test",
        }
        self.stats.served_ok += 1
        self.stats.prompt_tokens += len(tokens)
        self.stats.cached_prompt_tokens += cached
        if self.stats.log is not None and body is not None:
            self.stats.log.append({"conversation": conversation_key(body),
                                   "messages": len(body.get("messages") or []),
                                   "prompt_tokens": len(tokens), "cached_tokens": cached})
        return web.Response(body=json.dumps(payload).encode(), content_type=JSON_TYPE)

    async def _inject(
        self, fault: str, request: web.Request, endpoint: Endpoint
    ) -> web.StreamResponse:
        if fault == "429":
            return error_response(
                429,
                "Rate limit reached (injected by the mindprobe test server)",
                kind="requests",
                code="rate_limit_exceeded",
                headers=self.retry_after,
            )
        if fault == "malformed":
            broken = f'{{"id": "{endpoint.id_prefix}-broken", "object": "{endpoint.object_name}", '
            return web.Response(
                body=(broken + '"choices": [{"index": 0, "mess').encode(), content_type=JSON_TYPE
            )
        if fault == "drop":
            if request.transport is not None:
                request.transport.abort()
            await asyncio.Event().wait()  # cancelled by aiohttp once the connection is lost
        return error_response(
            500,
            self._echo(request) + "The server had an error while processing your request "
            "(injected by the mindprobe test server)",
            kind="server_error",
        )


_OPEN, _CLOSE = "<think>", "</think>"


def _split_thinking(message: dict[str, Any], pieces: list[str]) -> int:
    """Move a leading <think> block of `message` into `reasoning_content`, as a server's
    reasoning parser does; the number of reply pieces (tokens) spent thinking."""
    content = message.get("content") or ""
    head = content.lstrip()
    if not head.startswith(_OPEN):
        return 0
    inner = head[len(_OPEN):]
    end = inner.find(_CLOSE)
    if end < 0:
        message["reasoning_content"], message["content"] = inner.strip(), None
        return len(pieces)
    message["reasoning_content"] = inner[:end].strip()
    message["content"] = inner[end + len(_CLOSE):].lstrip()
    thought = len(content) - len(message["content"])
    used, count = 0, 0
    for piece in pieces:
        if used >= thought:
            break
        used += len(piece)
        count += 1
    return count
