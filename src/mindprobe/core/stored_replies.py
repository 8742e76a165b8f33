"""What a record keeps of a reply: each reply once, and at most `MAX_STORED_CHARS` of it.

A server may answer a `max_tokens=16` request with 60 MiB (a broken server, a proxy's error
page, a model that ignores the cap); stored as it came, once per call, once as the record's
`reply` and again in the response cache, three items made half a gigabyte of records. The
benchmark has already parsed its answer from the full text when the record is written, so a
record keeps the first `MAX_STORED_CHARS` characters of any longer text, and beside it the full
length (`<field>_chars`) and `<field>_truncated: true`. The last call of a list keeps no copy of
the reply its record (or chat turn) holds as `reply` (readers take it from there:
`core.requests.sent_calls`, `replies_of`). The response cache does not store a reply over the
cap at all (`fits_cache`): a cut reply served from the cache would parse differently from the
full one, and a cached run must score exactly as an uncached one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

#: Characters of one text field a record stores (1 MiB of ASCII), documented in
#: docs/concepts.md ("What a record holds").
MAX_STORED_CHARS = 1 << 20
#: Fields holding what was sent, never cut (a request must be rebuildable from its record).
_SENT = frozenset({"content", "prompt", "messages"})
_SIZE_OPTS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


def store_once(record: dict[str, Any], limit: int = MAX_STORED_CHARS) -> dict[str, Any]:
    """`record` bounded in place (and returned): a text field over `limit` characters cut,
    with its full length and a flag beside it; a last call's reply that its holder keeps as
    `reply` dropped from the call."""
    _drop_replies(record)
    if within(record, limit):  # no text can be over the cap: nothing to look for
        return record
    _cut(record, limit)
    return record


def encoded_once(record: dict[str, Any], encode: Callable[[Any], bytes],
                 limit: int = MAX_STORED_CHARS) -> bytes:
    """`encode(store_once(record))`, encoding a record within `limit` bytes once, not twice
    (the size check of `store_once` is the same encode): every record a run writes."""
    _drop_replies(record)
    raw = encode(record)
    if len(raw) <= limit:  # no text in it can be over the cap
        return raw
    _cut(record, limit)
    return encode(record)


def within(value: Any, limit: int) -> bool:
    """True when `value`'s JSON is at most `limit` bytes, so no text in it can be over
    `limit` characters (a character is at least one byte, quotes aside): one C-speed encode
    answers for nearly every record and reply, sparing a walk over each of its fields."""
    try:
        return len(orjson.dumps(value, default=str, option=_SIZE_OPTS)) <= limit
    except (TypeError, orjson.JSONEncodeError):  # not encodable as is: walk it
        return False


def _drop_replies(obj: dict[str, Any] | list[Any]) -> None:
    """Every `X_request` list (and `request`) whose last call's reply is the holder's
    `X_reply` (`reply`) keeps it once, in the holder; into dicts and lists only (never into
    what was sent), so a record's scalars cost no call each."""
    if isinstance(obj, list):
        for v in obj:
            if isinstance(v, dict | list):
                _drop_replies(v)
        return
    for key, value in obj.items():
        if isinstance(value, list):
            if isinstance(key, str) and key.endswith("request") and value:
                last = value[-1]
                answer = obj.get(key[: -len("request")] + "reply")
                if isinstance(last, dict) and "reply" in last and last["reply"] == answer:
                    del last["reply"]
            if key not in _SENT:
                _drop_replies(value)
        elif isinstance(value, dict) and key not in _SENT:
            _drop_replies(value)


def _cut(obj: Any, limit: int) -> None:
    """Every text field over `limit` characters (not what was sent) cut, its full length and
    a flag beside it."""
    if isinstance(obj, list):
        for v in obj:
            _cut(v, limit)
        return
    if not isinstance(obj, dict):
        return
    for key in list(obj):
        value = obj[key]
        if isinstance(value, str):
            if len(value) > limit and key not in _SENT and isinstance(key, str):
                obj[key] = value[:limit]
                obj[f"{key}_chars"] = len(value)
                obj[f"{key}_truncated"] = True
        elif key not in _SENT:
            _cut(value, limit)


def fits_cache(value: Any, limit: int = MAX_STORED_CHARS) -> bool:
    """Whether a reply (its cached form) may be cached: no text in it over the cap."""
    if within(value, limit):
        return True
    return _fits(value, limit)


def _fits(value: Any, limit: int) -> bool:
    if isinstance(value, str):
        return len(value) <= limit
    if isinstance(value, dict):
        return all(_fits(v, limit) for v in value.values())
    if isinstance(value, list | tuple):
        return all(_fits(v, limit) for v in value)
    return True
