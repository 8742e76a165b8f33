"""The OpenAI-compatible wire format, apart from any client: server URLs, answer constraints
(llama.cpp grammars, OpenAI structured outputs), log-probs in both response shapes, and the
error bodies and Retry-After headers of failed requests. Shared by the one-server client, the
multi-endpoint router and the MediaWiki client's retries."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

import orjson

from mindprobe.errors import ModelError

RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529}


def normalise_base_url(url: str) -> str:
    """Accept `host:port`, `http://host:port` or `.../v1`; always return `.../v1` without slash."""
    if "://" not in url:
        url = "http://" + url
    try:
        parts = urlsplit(url)  # raises on an unclosed IPv6 bracket (`http://[::1`)
        parts.port  # noqa: B018 (raises on a port out of range or not a number)
        bad = False
    except ValueError:
        bad = True
    if bad or not parts.hostname or parts.scheme not in ("http", "https"):
        raise ModelError(f"bad server URL {url!r}: expected http(s)://HOST[:PORT][/v1], e.g. "
                         "http://127.0.0.1:8000/v1")
    path = parts.path.rstrip("/")
    if not path:
        path = "/v1"
    return f"{parts.scheme}://{parts.netloc}{path}"


def gbnf_choice(choices: list[str]) -> str:
    """A llama.cpp grammar that accepts exactly one of the given strings."""
    alts = " | ".join(json.dumps(c) for c in choices)
    return f"root ::= {alts}"


def json_schema_choice(choices: list[str]) -> dict[str, Any]:
    """OpenAI structured outputs restricted to one of `choices` (as {"answer": ...})."""
    schema = {"type": "object", "properties": {"answer": {"type": "string", "enum": choices}},
              "required": ["answer"], "additionalProperties": False}
    return {"type": "json_schema",
            "json_schema": {"name": "answer", "schema": schema, "strict": True}}


def json_answer(text: str) -> str:
    """The answer of a structured-outputs reply (the raw text when it is not that JSON)."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return text
    return str(value["answer"]) if isinstance(value, dict) and "answer" in value else text


def first_token_logprob(top: dict[str, float], candidate: str) -> float | None:
    """The best log-prob among top tokens that begin `candidate` (a token such as "TR" for
    "TRUE", or "TRUE" itself); None when no top token does."""
    best = None
    for tok, lp in top.items():
        t = (tok or "").strip()
        if t and candidate.startswith(t) and (best is None or lp > best):
            best = lp
    return best


def single_token(top: dict[str, float], candidate: str) -> bool:
    return any((tok or "").strip() == candidate for tok in top)


def parse_logprobs(lp: Any) -> list[dict[str, Any]] | None:
    """Normalise chat-style and completions-style logprobs to [{token, logprob, top}]."""
    if not lp:
        return None
    if isinstance(lp, dict) and isinstance(lp.get("content"), list):
        return [
            {
                "token": t.get("token"),
                "logprob": t.get("logprob"),
                "top": {x.get("token"): x.get("logprob") for x in t.get("top_logprobs") or []},
            }
            for t in lp["content"]
        ]
    if isinstance(lp, dict) and "tokens" in lp:
        tops = lp.get("top_logprobs") or [None] * len(lp["tokens"])
        return [
            {"token": tok, "logprob": p, "top": dict(top or {})}
            for tok, p, top in zip(lp["tokens"], lp.get("token_logprobs") or [], tops, strict=False)
        ]
    return None


def parse_retry_after(value: str | None) -> float | None:
    """A Retry-After header (delta-seconds or HTTP-date) as seconds from now; None if absent/bad."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def error_text(raw: bytes) -> str:
    try:
        body = json.loads(raw)
        err = body.get("error", body)
        msg = err.get("message") if isinstance(err, dict) else err
        return str(msg)[:300]
    except (ValueError, AttributeError):
        return raw[:300].decode("utf-8", "replace")


def served_identity(card: dict[str, Any] | None, props: dict[str, Any] | None
                    ) -> dict[str, Any]:
    """What a server says about the model behind a name: vLLM's `root` and `max_model_len`,
    llama.cpp's model file (/props `model_path`, its name only: the folder is the host's) and
    its size and parameter count (the card's `meta`). Empty for servers that say nothing."""
    out: dict[str, Any] = {}
    card = card or {}
    for key in ("root", "max_model_len"):
        if card.get(key) not in (None, ""):
            out[key] = card[key]
    meta = card.get("meta") if isinstance(card.get("meta"), dict) else {}
    for key in ("size", "n_params"):
        if isinstance(meta.get(key), int):
            out[f"model_{key}"] = meta[key]
    path = (props or {}).get("model_path")
    if isinstance(path, str) and path:
        out["model_file"] = path.replace("\\", "/").rsplit("/", 1)[-1]
    return out


def served_window(card: Any, props: dict[str, Any] | None) -> tuple[int | None, str]:
    """(context window, where it was read) as a server states it: llama.cpp's `/props`
    (`default_generation_settings.n_ctx`, per slot; older servers: `n_ctx`), else the model
    card's `max_model_len` (vLLM, SGLang). (None, "") when it says nothing usable."""
    props = props if isinstance(props, dict) else {}
    settings = props.get("default_generation_settings")
    settings = settings if isinstance(settings, dict) else {}
    for value, source in ((settings.get("n_ctx"), "llama.cpp /props n_ctx"),
                          (props.get("n_ctx"), "llama.cpp /props n_ctx"),
                          ((card or {}).get("max_model_len") if isinstance(card, dict) else None,
                           "the server's max_model_len")):
        if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**31:
            return value, source
    return None, ""


def served_protocol(props: dict[str, Any] | None) -> tuple[bool, str] | None:
    """(has a chat template, why) from a llama.cpp server's /props `chat_template`; None when
    the server says nothing about it. A server's model is asked through its chat endpoint
    either way (the plan is made before the server is reached): this is what the manifest
    records, so a base model behind a server's fallback template is visible there."""
    template = (props or {}).get("chat_template")
    if not isinstance(template, str):
        return None
    if template.strip():
        return True, "chat template in the server's /props (chat_template): an instruct model"
    return False, ("no chat template in the server's /props: asked through its chat endpoint "
                   "all the same (its fallback template)")
