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

from typing import Any

#: Characters of one text field a record stores (1 MiB of ASCII), documented in
#: docs/concepts.md ("What a record holds").
MAX_STORED_CHARS = 1 << 20
#: Fields holding what was sent, never cut (a request must be rebuildable from its record).
_SENT = frozenset({"content", "prompt", "messages"})


def store_once(record: dict[str, Any], limit: int = MAX_STORED_CHARS) -> dict[str, Any]:
    """`record` bounded in place (and returned): a text field over `limit` characters cut,
    with its full length and a flag beside it; a last call's reply that its holder keeps as
    `reply` dropped from the call."""
    _walk(record, limit)
    return record


def _walk(obj: Any, limit: int) -> None:
    if isinstance(obj, list):
        for v in obj:
            _walk(v, limit)
        return
    if not isinstance(obj, dict):
        return
    _drop_repeated_reply(obj)
    for key in list(obj):
        value = obj[key]
        if isinstance(value, str):
            if len(value) > limit and key not in _SENT and isinstance(key, str):
                obj[key] = value[:limit]
                obj[f"{key}_chars"] = len(value)
                obj[f"{key}_truncated"] = True
        elif key not in _SENT:
            _walk(value, limit)


def _drop_repeated_reply(holder: dict[str, Any]) -> None:
    """Every `X_request` list (and `request`) whose last call's reply is the holder's `X_reply`
    (`reply`) keeps it once, in the holder."""
    for key, calls in holder.items():
        if not (isinstance(key, str) and key.endswith("request") and isinstance(calls, list)):
            continue
        answer = key[: -len("request")] + "reply"
        last = calls[-1] if calls else None
        if isinstance(last, dict) and "reply" in last and last["reply"] == holder.get(answer):
            del last["reply"]


def fits_cache(value: Any, limit: int = MAX_STORED_CHARS) -> bool:
    """Whether a reply (its cached form) may be cached: no text in it over the cap."""
    if isinstance(value, str):
        return len(value) <= limit
    if isinstance(value, dict):
        return all(fits_cache(v, limit) for v in value.values())
    if isinstance(value, list | tuple):
        return all(fits_cache(v, limit) for v in value)
    return True
