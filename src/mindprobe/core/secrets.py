"""Credentials never reach disk: the one place that takes them out of what mindprobe shows and
writes (manifests, locks, records, reports, exports, the recorded command line) while the
client still sends them.

A server URL can carry credentials (`http://user:KEY@host/v1`, `...?api_key=KEY`); the client
splits them off (`split_credentials`) and sends them with every request, and every text shown or
written goes through `redact`: URL userinfo, the values of query parameters whose name contains
a secret word (`is_secret_name`: `api_key_v2`, `X-Amz-Signature`; not `max_tokens`) and
`Bearer`/`Basic` tokens become `***`, and so does every secret value this process holds
(`remember`: API keys from the environment or an endpoints file's `key_env`, the parts split
off URLs, the Basic token they make) and its base64, wherever it appears. What a server sends
back is data: replies, errors and cached entries are masked only for those held values
(`redact_known`, `redact_value`), before anything records, caches or shows them.
"""

from __future__ import annotations

import base64
import os
import re
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

import orjson

MASK = "***"
#: Secrets shorter than this are not searched for in arbitrary text (they would mask ordinary
#: words); the patterns below still hide them where they stand in a URL or a header.
MIN_REMEMBERED = 6
#: A query parameter (or environment variable) whose name *contains* one of these words,
#: case-insensitive, holds a secret: `api_key_v2`, `X-Amz-Signature`, `my_token_2`, `apikey`.
SECRET_WORDS = ("key", "token", "secret", "password", "passwd", "pwd", "auth", "signature",
                "credential")
#: ... or is one of these words exactly (`?sig=` of an Azure SAS URL; "design" is not one).
_SECRET_PARTS = frozenset({"sig", "pass"})
#: Ordinary words that contain a secret word: a parameter named so is shown.
_ORDINARY = frozenset({"author", "authors", "authored", "authority", "monkey", "monkeys",
                       "donkey", "turkey", "hockey", "jockey", "whiskey", "keyword",
                       "keywords", "keyboard", "keynote", "tokenizer", "tokenizers",
                       "tokenize", "tokenization"})
#: Environment variables named like secrets that are not (the working directory).
_PLAIN_ENV = frozenset({"PWD", "OLDPWD"})
#: Words before `tokens` that make it a count, not a credential (`max_tokens=16`).
_COUNTS = frozenset({"max", "min", "num", "n", "total", "prompt", "completion", "cached",
                     "reasoning", "output", "input", "new"})
_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@?#'\"]+@")
#: A URL query parameter: the rule of `is_secret_name` decides whether its value is masked.
_QUERY = re.compile(r"([?&;])([A-Za-z0-9_.~%-]+)=([^&#\s'\"]+)")
#: A header's value: `Authorization: Bearer X` / `Basic X`, `x-api-key: X` and the like.
_HEADER = re.compile(r"(?i)\b((?:authorization\s*[:=]\s*(?:bearer\s+|basic\s+)?)|"
                     r"(?:(?:x-)?(?:api-?key|auth-?token|access-?token)\s*[:=]\s*))"
                     r"[^\s,;&#'\"]+")
#: A bearer token on its own (long enough not to be a word: "bearer of news" stays).
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{16,}")

#: Every form of every secret this process holds, longest first when searched.
_remembered: set[str] = set()
#: Encoded forms searched for in bytes (raw, as JSON escapes them).
_remembered_bytes: set[bytes] = set()
_ordered: list[str] = []
_ordered_bytes: list[bytes] = []


def is_secret_name(name: str) -> bool:
    """Whether a query parameter or environment variable named `name` holds a secret: one of
    its words (split at `_-.` and camelCase) contains a secret word, unless that word is an
    ordinary one (`author`, `monkey`, `tokenizer`) or `tokens` counted (`max_tokens`)."""
    parts = [p.lower() for p in _PARTS.findall(unquote(name))]
    for i, part in enumerate(parts):
        if part in _SECRET_PARTS:
            return True
        if part in _ORDINARY or not any(w in part for w in SECRET_WORDS):
            continue
        if part in ("tokens", "token") and i > 0 and parts[i - 1] in _COUNTS:
            continue
        return True
    return False


def _encodings(secret: bytes) -> set[bytes]:
    """How a secret can appear besides itself: base64 (standard and URL-safe, padded or not),
    and the stable middle of its base64 inside a longer encoded text (at each of the three
    alignments; only where that middle is long enough not to occur by chance)."""
    out = set()
    for enc in (base64.b64encode, base64.urlsafe_b64encode):
        whole = enc(secret)
        out |= {whole, whole.rstrip(b"=")}
        for shift in (0, 1, 2):
            inner = enc(b"\0" * shift + secret)
            start = (shift * 4 + 2) // 3 + 1 if shift else 0  # characters the prefix touches
            end = len(inner) - (3 if len(inner) > 4 else 0)  # ... and by the tail
            middle = inner[start:end].rstrip(b"=")
            if len(middle) >= 12:
                out.add(middle)
    return out


def remember(*secrets: str | None) -> None:
    """Note secret values this process holds, so `redact` masks them wherever they appear,
    and their base64 forms too (a Basic token, a secret inside an encoded blob)."""
    added = False
    for s in secrets:
        if not s or len(s) < MIN_REMEMBERED or s in _remembered:
            continue
        raw = s.encode()
        forms = {s, *(f.decode() for f in _encodings(raw))}
        _remembered.update(forms)
        _remembered_bytes.update(f.encode() for f in forms)
        _remembered_bytes.add(orjson.dumps(s)[1:-1])  # as JSON writes it (escapes)
        added = True
    if added:
        _ordered[:] = sorted(_remembered, key=len, reverse=True)
        _ordered_bytes[:] = sorted(_remembered_bytes, key=len, reverse=True)


def remember_environment(environ: Mapping[str, str] | None = None) -> None:
    """Remember the value of every environment variable named like a secret
    (`OPENAI_API_KEY`, `HF_TOKEN`, `WANDB_API_KEY`, `MLFLOW_TRACKING_PASSWORD`): the process
    holds them, so they are masked wherever they would appear."""
    env = os.environ if environ is None else environ
    remember(*(v for k, v in env.items() if is_secret_name(k) and k not in _PLAIN_ENV
               and not os.path.exists(v)))  # a path (a credentials file, a socket) is no key


def _query(match: re.Match[str]) -> str:
    sep, name, value = match.groups()
    return f"{sep}{name}={MASK}" if is_secret_name(name) and value != MASK else match.group(0)


def redact(text: str) -> str:
    """`text` with every credential masked: URL userinfo, secret-named query values and
    headers, Bearer/Basic tokens, and every value given to `remember` (and its base64)."""
    if not text:
        return text
    for secret in _ordered:
        if secret in text:
            text = text.replace(secret, MASK)
    if "://" in text:
        text = _USERINFO.sub(rf"\1{MASK}@", text)
    if "=" in text:
        text = _QUERY.sub(_query, text)
    text = _HEADER.sub(rf"\1{MASK}", text)
    return _BEARER.sub(rf"\1{MASK}", text)


def redact_json(obj: Any) -> Any:
    """`redact` applied to every string (keys included) of a JSON-like structure."""
    if isinstance(obj, str):
        return redact(obj)
    if isinstance(obj, dict):
        return {redact_json(k): redact_json(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [redact_json(v) for v in obj]
    return obj


def redact_known(data: bytes) -> bytes:
    """Only the remembered values (and their encodings) masked in already encoded bytes: what
    a server sent back (a record, a cached reply) is data, kept as it was, unless it holds
    one of the secrets this process sent."""
    for raw in _ordered_bytes:
        if raw in data:
            data = data.replace(raw, MASK.encode())
    return data


def redact_value(obj: Any) -> Any:
    """The remembered values masked in every string of a JSON-like structure (a record, a
    reply before it is cached or shown): only this process's own secrets are masked, the data
    is otherwise kept. `obj` itself comes back when it holds none (found in one pass over
    its JSON encoding, which is what a record becomes anyway)."""
    if not _ordered:
        return obj
    try:
        raw = orjson.dumps(obj, default=str, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:
        return _mask_known(obj)
    if not any(form in raw for form in _ordered_bytes):
        return obj
    return _mask_known(obj)


def _mask_known(obj: Any) -> Any:
    if isinstance(obj, str):
        for secret in _ordered:
            if secret in obj:
                obj = obj.replace(secret, MASK)
        return obj
    if isinstance(obj, dict):
        return {k: _mask_known(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_mask_known(v) for v in obj]
    return obj


def command_line(argv: Sequence[str] | None = None) -> str:
    """The `mindprobe ...` command line as recorded (manifest, lock): credentials masked."""
    args = list(sys.argv[1:] if argv is None else argv)
    return redact("mindprobe " + shlex.join(args))


@dataclass(frozen=True)
class UrlCredentials:
    """What a server URL carried besides its address, sent with every request, never shown:
    its userinfo (HTTP Basic) and its query parameters."""

    user: str | None = None
    password: str | None = None
    query: tuple[tuple[str, str], ...] = ()

    def headers(self) -> dict[str, str]:
        """`Authorization: Basic ...` for the userinfo (none without one)."""
        if self.user is None:
            return {}
        token = base64.b64encode(f"{self.user}:{self.password or ''}".encode()).decode()
        return {"Authorization": f"Basic {token}"}


def split_credentials(url: str) -> tuple[str, UrlCredentials]:
    """(the URL without userinfo and query, what they held); the secrets are remembered."""
    if "://" not in url:
        return url, UrlCredentials()
    parts = urlsplit(url)
    query = tuple(parse_qsl(parts.query, keep_blank_values=True))
    user = None if parts.username is None else unquote(parts.username)
    password = None if parts.password is None else unquote(parts.password)
    remember(parts.password, password, *((parts.username, user) if password is None else ()))
    remember(*(v for k, v in query if is_secret_name(k)))
    if user is not None:  # the Basic token the client will send for them
        remember(base64.b64encode(f"{user}:{password or ''}".encode()).decode())
    host = parts.netloc.rpartition("@")[2]
    clean = urlunsplit((parts.scheme, host, parts.path, "", parts.fragment))
    return clean, UrlCredentials(user, password, query)
