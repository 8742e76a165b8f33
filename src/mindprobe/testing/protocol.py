"""The OpenAI wire format as the test server speaks it: request parsing and response shapes."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from mindprobe.testing.tokens import chat_logprobs, completion_logprobs

CHAT_PATH, COMPLETIONS_PATH, MODELS_PATH = "/v1/chat/completions", "/v1/completions", "/v1/models"
JSON_TYPE = "application/json"
_MAX_TOKENS = 10**9


class ClientError(Exception):
    """A request the server refuses, carried to one place that renders the OpenAI error body."""

    def __init__(
        self, status: int, message: str, code: str | None = None, param: str | None = None
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.code, self.param = status, message, code, param


def error_response(
    status: int,
    message: str,
    kind: str = "invalid_request_error",
    code: str | None = None,
    param: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> web.Response:
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return web.Response(
        body=json.dumps(body).encode(), status=status, content_type=JSON_TYPE, headers=headers
    )


@dataclass(frozen=True)
class Prompt:
    """What an endpoint's request boils down to, so one code path serves both endpoints."""

    text: str  # whole prompt: usage counts and prefix cache
    cue: str  # last user message / prompt: what scripts match and echo repeats
    top_k: int | None  # logprobs alternatives requested; None = no logprobs
    max_tokens: int | None


def _int_option(body: dict[str, Any], key: str, low: int, high: int) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ClientError(
            400, f"'{key}' must be an integer in {low}..{high}, got {value!r}", param=key
        )
    return value


def _content_text(content: Any) -> str:
    if isinstance(content, list):  # multi-part content: keep the text parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def _chat_prompt(body: dict[str, Any]) -> Prompt:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ClientError(400, "'messages' must be a non-empty list", param="messages")
    lines, cue, text = [], None, ""
    for message in messages:
        if not isinstance(message, dict):
            raise ClientError(400, "each entry of 'messages' must be an object", param="messages")
        role, text = message.get("role", ""), _content_text(message.get("content"))
        lines.append(f"{role}: {text}")
        if role == "user":
            cue = text
    top_k = (_int_option(body, "top_logprobs", 0, 20) or 0) if body.get("logprobs") else None
    limit = _int_option(body, "max_completion_tokens", 1, _MAX_TOKENS)
    if limit is None:
        limit = _int_option(body, "max_tokens", 1, _MAX_TOKENS)
    # Without a user turn, the last message is what a script or echo should look at.
    return Prompt("\n".join(lines), text if cue is None else cue, top_k, limit)


def _completion_prompt(body: dict[str, Any]) -> Prompt:
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1:
        prompt = prompt[0]
    if not isinstance(prompt, str):
        raise ClientError(
            400,
            "'prompt' must be a string (this server takes one prompt per request)",
            param="prompt",
        )
    return Prompt(
        prompt,
        prompt,
        _int_option(body, "logprobs", 0, 20),
        _int_option(body, "max_tokens", 1, _MAX_TOKENS),
    )


def _chat_choice(pieces: list[str], finish: str, prompt: Prompt) -> dict[str, Any]:
    message = {"role": "assistant", "content": "".join(pieces), "refusal": None}
    logprobs = None if prompt.top_k is None else chat_logprobs(pieces, prompt.top_k)
    return {"index": 0, "message": message, "logprobs": logprobs, "finish_reason": finish}


def _completion_choice(pieces: list[str], finish: str, prompt: Prompt) -> dict[str, Any]:
    logprobs = (
        None
        if prompt.top_k is None
        else completion_logprobs(pieces, prompt.top_k, len(prompt.text))
    )
    return {"index": 0, "text": "".join(pieces), "logprobs": logprobs, "finish_reason": finish}


@dataclass(frozen=True)
class Endpoint:
    """The parts that differ between /chat/completions and /completions; the rest is shared."""

    path: str
    parse: Callable[[dict[str, Any]], Prompt]
    id_prefix: str
    object_name: str
    choice: Callable[[list[str], str, Prompt], dict[str, Any]]


CHAT = Endpoint(CHAT_PATH, _chat_prompt, "chatcmpl-test", "chat.completion", _chat_choice)
COMPLETIONS = Endpoint(
    COMPLETIONS_PATH, _completion_prompt, "cmpl-test", "text_completion", _completion_choice
)
