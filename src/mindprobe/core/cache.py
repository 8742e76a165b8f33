"""A response cache in one SQLite file, so no request is ever paid for twice.

Keys are sha256 over the endpoint identity and the full request (messages, sampling params,
constraints); API keys never enter them. Writes are batched into short transactions (WAL), so
several runs may share the file safely; losing the last uncommitted batch to a crash only
means re-asking those few requests.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from pathlib import Path
from typing import Any

import orjson

from mindprobe.errors import MindprobeError

_SCHEMA = "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL)"


def cache_key(identity: dict[str, Any], payload: dict[str, Any]) -> str:
    blob = orjson.dumps([identity, payload], option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(blob).hexdigest()


class ResponseCache:
    """get/put of JSON values by key. Puts are buffered in memory and flushed in one short
    transaction every `batch` puts or `max_age` seconds, so no write lock is ever held while
    waiting on a model and concurrent runs sharing the file do not block each other."""

    def __init__(self, path: Path, batch: int = 64, max_age: float = 1.0) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise MindprobeError(
                f"the response cache {self.path} is unusable ({exc}); delete it or use --no-cache"
            ) from None
        self._buffer: dict[str, bytes] = {}
        self._since = 0.0
        self._batch = batch
        self._max_age = max_age
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> dict[str, Any] | None:
        raw = self._buffer.get(key)
        if raw is None:
            row = self._db.execute("SELECT value FROM responses WHERE key=?", (key,)).fetchone()
            raw = row[0] if row else None
        if raw is None:
            self.misses += 1
            return None
        self.hits += 1
        return orjson.loads(raw)

    def put(self, key: str, value: dict[str, Any]) -> None:
        if not self._buffer:
            self._since = time.monotonic()
        self._buffer[key] = orjson.dumps(value)
        if len(self._buffer) >= self._batch or time.monotonic() - self._since > self._max_age:
            self.flush()

    def flush(self) -> None:
        if not self._buffer:
            return
        now = time.time()
        rows = [(k, v.decode(), now) for k, v in self._buffer.items()]
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany(
                "INSERT OR REPLACE INTO responses (key, value, created) VALUES (?, ?, ?)", rows
            )
        self._buffer.clear()

    def close(self) -> None:
        self.flush()
        self._db.close()

    def __len__(self) -> int:
        self.flush()
        return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
