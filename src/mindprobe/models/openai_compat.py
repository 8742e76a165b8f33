"""Any OpenAI-compatible server (OpenAI, vLLM, SGLang, Ollama, llama.cpp, TGI) over aiohttp.

We own retries and parsing: transient faults (connection errors, timeouts, 429, 5xx, garbled
bodies) are retried with jittered exponential backoff; faults that no retry can fix (bad key,
unknown model) stop the run at once with one clear message.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from typing import Any

import aiohttp
import orjson

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
from mindprobe.core.secrets import UrlCredentials, redact, remember, split_credentials
from mindprobe.errors import ModelError, did_you_mean
from mindprobe.models.completions import completion_of, request_body
from mindprobe.models.llamacpp import LlamaServerTools
from mindprobe.models.replies import ReplyTally, load_reply
from mindprobe.models.wire import (
    RETRYABLE_STATUS,
    error_text,
    first_token_logprob,
    json_answer,
    normalise_base_url,
    parse_retry_after,
    served_identity,
    served_protocol,
    served_window,
    single_token,
)

OPENAI_URL = "https://api.openai.com/v1"
class OpenAICompatModel(LlamaServerTools, Model):
    """A model served behind `/v1/chat/completions` and `/v1/completions`."""

    default_concurrency = 16

    def __init__(
        self,
        model: str,
        base_url: str,
        api_key: str | None,
        *,
        spec: str,
        label: str,
        timeout: float = 300.0,
        max_attempts: int = 6,
        backoff_base: float = 0.5,
        backoff_max: float = 30.0,
        grammar: str | None = None,
        identity_extra: dict[str, Any] | None = None,
        reasoning: Reasoning = NO_REASONING,
        credentials: UrlCredentials | None = None,
    ) -> None:
        self.model = model
        # what the URL carries besides the address is sent, never shown (core/secrets.py)
        if credentials is None:
            base_url, credentials = split_credentials(base_url)
        self.base_url = normalise_base_url(base_url)
        self._credentials = credentials
        self._api_key = api_key
        remember(api_key)
        self.spec = redact(spec)
        self.label = label
        self.timeout = timeout
        #: Attempts, backoff and when the server counts as dead (`core.retry`): a failed
        #: request in a streak of 24, with an outage of 8 s when nothing listens or a minute of
        #: 5xx / timeouts / garbled bodies (a restart or short outage is ridden out).
        self.retry = RetryPolicy(max_attempts, backoff_base, backoff_max)
        self.grammar = grammar  # "llama", "vllm" or None
        caps = {"logprobs"} | ({"grammar"} if grammar else set())
        if grammar in ("llama", "vllm"):
            caps.add("prefix")
        #: `reasoning_effort` sent with every request (None: not sent); "reasoning" in the
        #: capabilities: the model is known to think, so benchmarks leave room for it.
        self.reasoning = reasoning
        self.reasoning_effort = reasoning.effort
        if reasoning.thinks:
            caps.add("reasoning")
        self.capabilities = frozenset(caps)
        self._identity_extra = identity_extra or {}
        if self.reasoning_effort:
            self._identity_extra = {**self._identity_extra,
                                    "reasoning_effort": self.reasoning_effort}
        self._session: aiohttp.ClientSession | None = None
        self._headers = {"Content-Type": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._headers.update(credentials.headers())  # the URL's own user:password wins
        #: A grammar mechanism given by the caller (local engine) is not re-detected.
        self.grammar_fixed = False
        self._offered: list[str] = []
        #: What the server reports about the model it serves (see `served_identity`).
        self.served: dict[str, Any] = {}
        #: Odd replies (ignored usage, invalid content), told to the run once (`take_warnings`).
        self.replies = ReplyTally()
        #: Capabilities dropped once the server was asked, and why (`_learn_template`).
        self.dropped: dict[str, str] = {}
        self._notes: list[tuple[str, str]] = []

    # -- lifecycle -------------------------------------------------------------------------
    async def start(self) -> None:
        if self.base_url == OPENAI_URL and not self._api_key:
            raise ModelError(f"{self.spec} needs an API key: set OPENAI_API_KEY")
        self.retry.started()  # a fresh start: earlier failures do not count
        if self._session is None:
            self._session = self._new_session(self.timeout)
        await self._preflight()

    def _new_session(self, timeout: float) -> aiohttp.ClientSession:
        """The connection pool every request goes through: the key or the URL's userinfo in
        its headers, the URL's query parameters added to every request."""
        query = self._credentials.query

        async def add_query(request: aiohttp.ClientRequest, handler: Any) -> Any:
            request.url = request.url.extend_query(query)
            return await handler(request)

        return aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300),
            timeout=aiohttp.ClientTimeout(total=timeout), headers=self._headers,
            json_serialize=json.dumps, middlewares=(add_query,) if query else ())

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def identity(self) -> dict[str, Any]:
        """The model, not the address: the served name, what the server says it serves (after
        `start`) and settings that change answers. A rescheduled job on another host or port
        resumes the same run and cache; another model file under the same name does not."""
        where = {"api": "openai"} if self.base_url == OPENAI_URL else {}
        return {"model": self.model, **where, **self.served, **self._identity_extra}

    async def _preflight(self) -> None:
        """Fail in a second, not after minutes of retries, when the server or model is wrong."""
        assert self._session is not None
        url = f"{self.base_url}/models"
        try:
            async with self._session.get(url, timeout=aiohttp.ClientTimeout(total=15)) as resp:
                body = await resp.read()
                status = resp.status
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            raise ModelError(
                f"cannot reach the model server at {self.base_url} ({type(exc).__name__}: {exc}); "
                "is it running, and is the URL right?"
            ) from None
        if status in (401, 403):
            raise ModelError(self._auth_message(status))
        if status != 200:
            return  # servers without /models are fine; the first request will tell
        try:
            entries = json.loads(body).get("data", [])
            ids = [m.get("id") for m in entries]
        except (ValueError, AttributeError):
            return
        self._offered = [str(i) for i in ids if i]
        await self._learn_server(entries)

    async def _learn_server(self, entries: list[Any]) -> None:
        """What the server is, from its /v1/models `entries`: its constrained-answer mechanism,
        then, on llama.cpp, its /props (model, window, protocol) and /apply-template."""
        self._set_mechanism({str(m.get("owned_by", "")).lower() for m in entries
                             if isinstance(m, dict)})
        card = next((m for m in entries if isinstance(m, dict) and m.get("id") == self.model),
                    None)
        props = await self._get_json("/props") if self.grammar == "llama" else None
        self.served = served_identity(card, props)
        self._learn_window(card, props)
        self._note_protocol(props)
        await self._learn_template()

    def _learn_window(self, card: Any, props: dict[str, Any] | None) -> None:
        """The window as the server states it (`models.wire.served_window`)."""
        self.set_context_window(*served_window(card, props))

    def _note_protocol(self, props: dict[str, Any] | None) -> None:
        """What the server says of its chat template (/props), recorded with the capabilities."""
        said = served_protocol(props)
        if said is not None:
            chat, self.protocol_reason = said
            if chat:
                self.capabilities = self.capabilities | {"chat"}

    async def _get_json(self, path: str) -> dict[str, Any] | None:
        """GET `path` at the server root (llama.cpp's /props); None when it has none."""
        assert self._session is not None
        root = self.base_url[: -len("/v1")] if self.base_url.endswith("/v1") else self.base_url
        try:
            async with self._session.get(root + path,
                                         timeout=aiohttp.ClientTimeout(total=15)) as resp:
                if resp.status != 200:
                    return None
                doc = json.loads(await resp.read())
        except (TimeoutError, aiohttp.ClientError, OSError, ValueError):
            return None
        return doc if isinstance(doc, dict) else None

    def describe(self) -> dict[str, Any]:
        """The manifest's entry, with the capabilities the server turned out to lack."""
        doc = super().describe()
        if self.dropped:
            doc["dropped_capabilities"] = dict(self.dropped)
        return doc

    def deterministic(self, concurrency: int) -> bool | None:
        """Unknown for a server: whether batching changes greedy answers is its engine's
        business (an engine of our own says, see LocalModel)."""
        return None

    def _set_mechanism(self, owners: set[str]) -> None:
        """Which constrained-answer mechanism the server really has, from who it says it is:
        llama.cpp (GBNF grammar), vLLM/SGLang (guided choice), OpenAI (structured outputs);
        unknown servers get none, so `--prompting constrained` is refused, not ignored."""
        if self.grammar_fixed:
            return
        if self.base_url == OPENAI_URL:
            self.grammar = "openai"
        elif owners & {"llamacpp", "llama.cpp", "mindprobe-test"}:
            self.grammar = "llama"
        elif owners & {"vllm", "sglang"}:
            self.grammar = "vllm"
        else:
            self.grammar = None
        caps = set(self.capabilities) - {"grammar", "prefix", "tokenize", "template"}
        if self.grammar:
            caps.add("grammar")
        if self.grammar in ("llama", "vllm"):
            caps.add("prefix")
        if owners & {"llamacpp", "llama.cpp"}:  # its tokenizer and chat template, exactly
            caps |= {"tokenize", "template"}
            self.token_count_method = "llama.cpp tokenizer of the server"
        self.capabilities = frozenset(caps)

    def _auth_message(self, status: int) -> str:
        env = "OPENAI_API_KEY" if self.base_url == OPENAI_URL else "MINDPROBE_API_KEY"
        return (
            f"the server at {self.base_url} refused the request ({status} unauthorised); "
            f"set {env} to a valid API key"
        )

    # -- requests --------------------------------------------------------------------------
    def build_body(self, request: Request) -> tuple[str, dict[str, Any]]:
        """Translate a Request into (endpoint path, JSON body) (`models.completions`)."""
        return request_body(request, self.model, grammar=self.grammar,
                            reasoning_effort=self.reasoning_effort,
                            openai=self.base_url == OPENAI_URL, slots=self.supports_slots)

    async def complete(self, request: Request, ctx: CallContext) -> Completion:
        path, body = self.build_body(request)
        data = orjson.dumps(body)
        url = self.base_url + path
        last = "no attempt made"
        kind = "other"
        for attempt in range(self.retry.max_attempts):
            t0 = time.perf_counter()
            delay: float | None = None
            kind = "other"
            try:
                assert self._session is not None, "model not started"
                async with self._session.post(url, data=data) as resp:
                    status = resp.status
                    raw = await resp.read()
                    retry_after = resp.headers.get("Retry-After")
                if status == 200:
                    try:
                        payload = load_reply(raw)
                        comp = self._parse(payload, path, time.perf_counter() - t0)
                        if request.constrain and self.grammar == "openai":
                            comp.text = json_answer(comp.text)
                        self.retry.answered()
                        return comp
                    except (ValueError, KeyError, IndexError, TypeError) as exc:
                        last = f"malformed response body ({type(exc).__name__}: {exc})"
                else:
                    self._raise_fatal(status, raw)
                    last = f"HTTP {status}: {error_text(raw)}"
                    if status not in RETRYABLE_STATUS:
                        raise TransientError(last)
                    delay = parse_retry_after(retry_after)
            except (TimeoutError, aiohttp.ClientError, ConnectionError) as exc:
                last = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                if isinstance(exc, (aiohttp.ClientConnectorError, ConnectionRefusedError,
                                    aiohttp.ServerDisconnectedError)):
                    kind = "connection"
            # A 429, or any answer with Retry-After (a server still loading, overloaded), is
            # the server at work: it never counts towards a dead server.
            if delay is None and not last.startswith("HTTP 429"):
                self._note_failure(last, kind == "connection")
            if not self.retry.exhausted(attempt + 1):
                await self.retry.wait(attempt, delay)
        raise TransientError(f"gave up after {self.retry.max_attempts} attempts: {last}", kind)

    async def score_choices(self, request: Request, candidates: list[str],
                            ctx: CallContext) -> ChoiceScores:
        """First-token log-probs from the top-20 alternatives of a one-token reply (what every
        OpenAI-compatible server offers); a candidate outside the top 20 gets None."""
        one = replace(request, max_tokens=1, temperature=0.0, logprobs=20, constrain=False)
        comp = await self.complete(one, ctx)
        top = dict(comp.logprobs[0]["top"]) if comp.logprobs else {}
        first = [first_token_logprob(top, c) for c in candidates]
        full = [f if single_token(top, c) else None for f, c in zip(first, candidates,
                                                                      strict=True)]
        return ChoiceScores(list(candidates), first, full, top, "first-token top-20", 1, comp)

    def _note_failure(self, last: str, refused: bool) -> None:
        dead = self.retry.failed(refused)
        if dead:
            raise ModelError(
                f"the model server at {self.base_url} stopped answering ({dead}; last: {last})"
            )

    def _raise_fatal(self, status: int, raw: bytes) -> None:
        if status in (401, 403):
            raise ModelError(self._auth_message(status))
        if status == 404:
            offered = ", ".join(sorted(self._offered)[:20])
            raise ModelError(
                f"unknown model {self.model!r} at {self.base_url}: {error_text(raw)}"
                + did_you_mean(self.model, self._offered)
                + (f"; the server offers: {offered}" if offered else
                   " (check the model name and the URL)")
            )

    def _parse(self, payload: dict[str, Any], path: str, latency: float) -> Completion:
        """A 200 reply as a Completion (`models.completions`), odd replies tallied in
        `self.replies`."""
        comp = completion_of(payload, path, latency, self.replies)
        if comp.reasoning and "reasoning" not in self.capabilities:
            # Known to think from now on (an empty <think></think>, e.g. Qwen3 with thinking
            # switched off, does not count).
            self.capabilities = self.capabilities | {"reasoning"}
        return comp

    def take_warnings(self) -> list[str]:
        return self.replies.take()
