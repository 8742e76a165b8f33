"""Credentials never reach disk: the one place that takes them out of what mindprobe shows and
writes (manifests, locks, records, reports, exports, the recorded command line) while the
client still sends them.

A server URL can carry credentials (`http://user:KEY@host/v1`, `...?api_key=KEY`); the client
splits them off (`split_credentials`) and sends them with every request, and every text shown or
written goes through `redact`: URL userinfo, key-like query values and `Bearer`/`Basic` tokens
become `***`, and so does every secret value this process was given (`remember`: API keys from
the environment or an endpoints file's `key_env`, the parts split off URLs), wherever it
appears.
"""

from __future__ import annotations

import base64
import re
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

MASK = "***"
#: Secrets shorter than this are not searched for in arbitrary text (they would mask ordinary
#: words); the patterns below still hide them where they stand in a URL or a header.
MIN_REMEMBERED = 6
#: Query parameters and header names whose values are secrets.
_NAMES = r"(?:key|token|secret|password|passwd|pwd|auth|authorization|sig|signature|credentials?)"
_SECRET_NAME = re.compile(rf"(?i)^[A-Za-z0-9_.-]*{_NAMES}$")
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@?#'\"]+@")
_QUERY = re.compile(rf"(?i)([?&;][A-Za-z0-9_.-]*{_NAMES}=)[^&#\s'\"]+")
#: A header's value: `Authorization: Bearer X` / `Basic X`, `x-api-key: X` and the like.
_HEADER = re.compile(r"(?i)\b((?:authorization\s*[:=]\s*(?:bearer\s+|basic\s+)?)|"
                     r"(?:(?:x-)?(?:api-?key|auth-?token|access-?token)\s*[:=]\s*))"
                     r"[^\s,;'\"]+")
#: A bearer token on its own (long enough not to be a word: "bearer of news" stays).
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{16,}")

_remembered: set[str] = set()


def remember(*secrets: str | None) -> None:
    """Note secret values this process holds, so `redact` masks them wherever they appear."""
    for s in secrets:
        if s and len(s) >= MIN_REMEMBERED:
            _remembered.add(s)


def redact(text: str) -> str:
    """`text` with every credential masked: URL userinfo, key-like query values and headers,
    Bearer/Basic tokens, and every value given to `remember`."""
    if not text:
        return text
    for secret in sorted(_remembered, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, MASK)
    if "://" in text:
        text = _USERINFO.sub(rf"\1{MASK}@", text)
    if "=" in text:
        text = _QUERY.sub(rf"\1{MASK}", text)
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
    """Only the remembered values masked in already encoded bytes (a record: its replies and
    prompts are data, kept as they were, unless they contain one of our own secrets)."""
    for secret in sorted(_remembered, key=len, reverse=True):
        raw = secret.encode()
        if raw in data:
            data = data.replace(raw, MASK.encode())
    return data


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
    remember(*(v for k, v in query if _SECRET_NAME.search(k)))
    host = parts.netloc.rpartition("@")[2]
    clean = urlunsplit((parts.scheme, host, parts.path, "", parts.fragment))
    return clean, UrlCredentials(user, password, query)
