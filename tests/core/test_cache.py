"""The response cache: stable keys without secrets, buffered writes that survive reopen, and\nentries served only when verified (issue 33.1)."""

from __future__ import annotations

import json
import sqlite3
import time

from mindprobe.core import cache as cache_module
from mindprobe.core.cache import ResponseCache, cache_key


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


def _warnings() -> tuple[list[str], object]:
    said: list[str] = []
    return said, said.append


def test_a_damaged_file_is_set_aside_and_rebuilt(tmp_path):
    path = tmp_path / "c.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    said, warn = _warnings()
    c = ResponseCache(path, batch=1, warn=warn)
    aside = list(tmp_path.glob("c.sqlite.damaged-*"))
    assert len(aside) == 1 and aside[0].read_bytes().startswith(b"this is not")
    assert len(said) == 1 and str(aside[0]) in said[0] and "damaged" in said[0]
    c.put("k", {"v": 1})
    assert c.get("k") == {"v": 1}
    c.close()
    assert ResponseCache(path, warn=warn).get("k") == {"v": 1} and len(said) == 1


def test_a_damaged_schema_is_set_aside_on_read(tmp_path):
    """`no such column`: what a corrupt schema page reads as; found at the first read."""
    path = tmp_path / "c.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE entries (key TEXT PRIMARY KEY, value BLOB)")
    db.commit()
    db.close()
    said, warn = _warnings()
    c = ResponseCache(path, warn=warn)
    assert c.get("k") is None and c.misses == 1
    assert "no such column" in said[0] and list(tmp_path.glob("c.sqlite.damaged-*"))
    c.put("k", {"v": 2})
    c.close()
    assert ResponseCache(path).get("k") == {"v": 2}


def test_an_entry_that_is_not_its_own_is_a_miss(tmp_path):
    """Another key's reply (a damaged index or page) or a changed byte is never served."""
    path = tmp_path / "c.sqlite"
    c = ResponseCache(path)
    c.put("a", {"text": "TRUE"})
    c.put("b", {"text": "FALSE"})
    c.put("c", {"text": "kept"})
    c.close()
    db = sqlite3.connect(path)
    va, vb = (db.execute("SELECT value FROM entries WHERE key=?", (k,)).fetchone()[0]
              for k in "ab")
    db.execute("UPDATE entries SET value=? WHERE key='a'", (vb,))
    db.execute("UPDATE entries SET value=? WHERE key='b'", (va.replace(b"TRUE", b"TRUF"),))
    db.commit()
    db.close()
    said, warn = _warnings()
    c = ResponseCache(path, warn=warn)
    assert c.get("a") is None and c.get("b") is None and c.get("c") == {"text": "kept"}
    assert (c.hits, c.misses, c.rejected) == (1, 2, 2)
    assert len(said) == 1 and "damaged entries" in said[0]
    c.put("a", {"text": "asked again"})  # the answer asked again replaces the damaged entry
    c.close()
    assert said[-1].startswith("2 damaged entries")
    assert ResponseCache(path).get("a") == {"text": "asked again"}


def _old_cache(path, rows: dict[str, dict]) -> None:
    """A cache as mindprobe wrote it before checksums (`responses`: key, value, created)."""
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL)")
    db.executemany("INSERT INTO responses VALUES (?, ?, 0)",
                   [(k, json.dumps(v)) for k, v in rows.items()])
    db.commit()
    db.close()


def test_a_cache_of_an_older_version_is_never_trusted(tmp_path):
    """Issue 41.8: an old cache in which a quarter of the rows hold other requests' replies
    serves none of them (its rows cannot be verified: they are dropped with one notice), and
    the table is gone, so the next open says nothing."""
    keys = [cache_key({"model": "m"}, {"messages": [i]}) for i in range(40)]
    rows = {k: {"text": f"reply to {i}"} for i, k in enumerate(keys)}
    for i in range(0, 40, 4):  # every fourth row holds the next request's reply
        rows[keys[i]] = {"text": f"reply to {i + 1}"}
    _old_cache(tmp_path / "c.sqlite", rows)
    said: list[str] = []
    c = ResponseCache(tmp_path / "c.sqlite", warn=said.append)
    served = {i: c.get(k) for i, k in enumerate(keys)}
    wrong = [i for i, v in served.items() if v is not None and v["text"] != f"reply to {i}"]
    assert wrong == [] and len(c) == 0
    assert len(said) == 1 and "older mindprobe" in said[0] and "40 entries" in said[0]
    c.put(keys[1], {"text": "reply to 1"})  # asked again, cached with a checksum
    c.close()
    again: list[str] = []
    c = ResponseCache(tmp_path / "c.sqlite", warn=again.append)
    assert c.get(keys[1]) == {"text": "reply to 1"} and again == []
    c.close()


def test_integrity_options(tmp_path):
    c = ResponseCache(tmp_path / "c.sqlite")
    assert c._db is not None
    assert c._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert c._db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert c._db.execute("PRAGMA cell_size_check").fetchone()[0] == 1
    c.close()


def _queries(cache: ResponseCache) -> list[str]:
    """The SQL statements `cache` runs from now on (SQLite's own trace hook)."""
    seen: list[str] = []
    cache._db.set_trace_callback(seen.append)
    return seen


def test_a_request_never_seen_is_a_miss_without_a_query(tmp_path):
    """A first run's requests (every one a miss) cost no lookup each: the keys of a cache up
    to KNOWN_MAX rows are read once, after LOAD_AFTER misses (each of those a query)."""
    path = tmp_path / "c.sqlite"
    c = ResponseCache(path, batch=1, sync_every=1000)
    c.put("old", {"v": 0})
    c.close()
    c = ResponseCache(path, batch=1, sync_every=1000)
    seen = _queries(c)
    assert [c.get(f"new-{i}") for i in range(cache_module.LOAD_AFTER)] == [None] * 32
    assert len(seen) == cache_module.LOAD_AFTER  # one lookup each; the next reads the keys
    assert c.get("new-x") is None
    seen.clear()
    assert [c.get(f"new-{i}") for i in range(100, 150)] == [None] * 50
    assert seen == [] and c.misses == 83
    assert c.get("old") == {"v": 0} and len(seen) == 1  # a known key is read from the file
    c.put("mine", {"v": 1})  # flushed (batch=1): known without a sync
    assert c.get("mine") == {"v": 1}
    c.close()


def test_another_processes_entries_are_seen_at_the_next_sync(tmp_path):
    """What another handle wrote since the last sync may be asked again (a miss), never
    served wrong; after `sync_every` seconds it is found."""
    path = tmp_path / "c.sqlite"
    a = ResponseCache(path, batch=1)
    b = ResponseCache(path, batch=1, sync_every=0.2)
    for i in range(cache_module.LOAD_AFTER + 1):
        assert b.get(f"miss-{i}") is None  # b has read the keys: none yet
    a.put("x", {"v": 1})
    assert b.get("x") is None  # not synced yet: a miss, asked again
    time.sleep(0.3)
    assert b.get("x") == {"v": 1}
    a.close()
    b.close()


def test_a_large_cache_is_looked_up_row_by_row(tmp_path, monkeypatch):
    monkeypatch.setattr(cache_module, "KNOWN_MAX", 2)
    path = tmp_path / "c.sqlite"
    c = ResponseCache(path, batch=1)
    for k in "abc":
        c.put(k, {"v": k})
    c.close()
    c = ResponseCache(path, batch=1)
    assert [c.get(f"zz{i}") for i in range(cache_module.LOAD_AFTER + 1)] == [None] * 33
    seen = _queries(c)
    assert c.get("zz") is None and len(seen) == 1  # asked the file
    assert c.get("a") == {"v": "a"}
    c.close()


def test_a_run_answered_from_the_cache_never_reads_the_keys(tmp_path):
    path = tmp_path / "c.sqlite"
    c = ResponseCache(path, batch=1)
    for i in range(40):
        c.put(f"k{i}", {"v": i})
    c.close()
    c = ResponseCache(path)
    seen = _queries(c)
    assert [c.get(f"k{i}")["v"] for i in range(40)] == list(range(40))
    assert len(seen) == 40 and not any("rowid" in q for q in seen)  # one lookup each, no load
    c.close()


def test_the_keys_in_memory_stay_bounded_by_this_processes_own_writes(tmp_path, monkeypatch):
    """A first run of many requests does not grow the key set past KNOWN_MAX: once it would,
    the cache is looked up row by row, its entries still found."""
    monkeypatch.setattr(cache_module, "KNOWN_MAX", 50)
    c = ResponseCache(tmp_path / "c.sqlite", batch=1)
    for i in range(cache_module.LOAD_AFTER + 1):
        assert c.get(f"miss-{i}") is None  # the keys are read: none
    assert c._known == set()
    for i in range(60):
        c.put(f"k{i}", {"v": i})
    assert c._known is None and c.get("k59") == {"v": 59} and c.get("k0") == {"v": 0}
    c.close()
