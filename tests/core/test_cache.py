"""The response cache: stable keys without secrets, buffered writes that survive reopen."""

from __future__ import annotations

import sqlite3

import pytest

from mindprobe.core.cache import ResponseCache, cache_key
from mindprobe.errors import MindprobeError


def test_key_depends_on_identity_and_request():
    a = cache_key({"endpoint": "u", "model": "m"}, {"messages": [1], "temperature": 0})
    assert a == cache_key({"model": "m", "endpoint": "u"}, {"temperature": 0, "messages": [1]})
    assert a != cache_key({"endpoint": "u", "model": "m2"}, {"messages": [1], "temperature": 0})
    assert a != cache_key({"endpoint": "u", "model": "m"}, {"messages": [2], "temperature": 0})


def test_put_get_flush_reopen(tmp_path):
    path = tmp_path / "c.sqlite"
    c = ResponseCache(path, batch=1000, max_age=1000)
    c.put("k", {"text": "hi"})
    assert c.get("k") == {"text": "hi"}  # visible before the flush
    c.close()
    c2 = ResponseCache(path)
    assert c2.get("k") == {"text": "hi"}
    assert c2.get("nope") is None
    assert (c2.hits, c2.misses) == (1, 1)
    c2.close()


def test_two_handles_share_the_file(tmp_path):
    path = tmp_path / "c.sqlite"
    a, b = ResponseCache(path, batch=1), ResponseCache(path, batch=1)
    a.put("x", {"v": 1})
    assert b.get("x") == {"v": 1}
    b.put("y", {"v": 2})
    assert a.get("y") == {"v": 2}
    a.close()
    b.close()


def test_corrupt_cache_file_is_one_clear_error(tmp_path):
    path = tmp_path / "c.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(MindprobeError, match="--no-cache"):
        ResponseCache(path)
    assert sqlite3  # the error came from sqlite, surfaced as ours
