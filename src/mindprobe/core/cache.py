"""A response cache in one SQLite file, so no request is ever paid for twice, and never answered
with a reply that is not its own.

Keys are sha256 over the endpoint identity and the full request (messages, sampling params,
constraints); API keys never enter them. Writes are batched into short transactions (WAL), so
several runs may share the file safely; losing the last uncommitted batch to a crash only
means re-asking those few requests. A cache of up to `KNOWN_MAX` entries keeps their keys in
memory (read after a run's first few misses), so a request it has never seen (every request
of a first run) is a miss without a query; what another process wrote is picked up every `sync_every` seconds (an entry it wrote
since then may be asked again, never served wrong).

A cache is trusted with results, so every entry carries a checksum over its key and its value,
checked on every read: a damaged page that hands back another request's reply, or a flipped
byte in a reply, is a miss (asked again, counted, warned about once), never a wrong record. A
file SQLite itself finds damaged (at open, by `quick_check`, or on any later read or write) is
renamed aside, named in a warning, and a new one started; a cache that cannot be written (a
full disk) is used read-only for the rest of the run. Items never fail because of the cache.
A cache written by an older mindprobe (no checksums) is dropped with a notice, never trusted;
what goes in and comes out is masked for the secrets this process sent (`core.secrets`), and
a reply over the stored-reply cap is not cached (`core.stored_replies`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from mindprobe.core.paths import free_space
from mindprobe.core.secrets import redact_known
from mindprobe.core.stored_replies import MAX_STORED_CHARS, fits_cache
from mindprobe.errors import MindprobeError

#: The table of verified entries; `responses` (no checksums) is what versions before it wrote,
#: dropped on open (`_migrate`).
_SCHEMA = ("CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, value BLOB NOT NULL, "
           "checksum TEXT NOT NULL, created REAL)")
_LEGACY = "responses"
#: SQLite result codes (primary, the low byte) of a damaged file: set aside and rebuilt.
#: SQLITE_ERROR is what a corrupt schema reads as ("no such column: value").
_DAMAGED = {sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_ERROR,
            sqlite3.SQLITE_FORMAT, sqlite3.SQLITE_SCHEMA}
#: ... of a file that cannot be written (full disk, read-only folder, I/O errors): read-only.
_UNWRITABLE = {sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY,
               sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM}
#: Caches with at most this many rows keep their keys in memory (about 150 bytes a key: 30
#: MB at most, this process's own entries included); larger ones are looked up row by row.
KNOWN_MAX = 200_000
#: ... read once a run has missed this often: a run answered from the cache reads none.
LOAD_AFTER = 32


def cache_key(identity: dict[str, Any], payload: dict[str, Any]) -> str:
    blob = orjson.dumps([identity, payload], option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(blob).hexdigest()


def entry_checksum(key: str | bytes, value: str | bytes) -> str:
    """What an entry stores beside its value: a digest of its full key and its value together,
    so a row read for one key is served only when it is that key's, and intact."""
    k = key.encode() if isinstance(key, str) else bytes(key)
    v = value.encode() if isinstance(value, str) else bytes(value)
    return hashlib.blake2b(k + b"\0" + v, digest_size=16).hexdigest()


def _code(exc: sqlite3.Error) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return None if code is None else code & 0xFF


def _warn_stderr(message: str) -> None:
    sys.stderr.write(f"warning: {message}\n")


class ResponseCache:
    """get/put of JSON values by key. Puts are buffered in memory and flushed in one short
    transaction every `batch` puts or `max_age` seconds, so no write lock is ever held while
    waiting on a model and concurrent runs sharing the file do not block each other.
    `warn` hears, once each, about damage found and a cache that became read-only."""

    def __init__(self, path: Path, batch: int = 256, max_age: float = 1.0,
                 warn: Callable[[str], None] | None = None, sync_every: float = 0.5) -> None:
        self.path = Path(path)
        self._warn = warn or _warn_stderr
        self._buffer: dict[str, bytes] = {}
        self._since = 0.0
        self._batch = batch
        self._max_age = max_age
        #: The keys in the file as of the last sync (None: not known, every miss is a query),
        #: the largest rowid read, the file's data_version then, and when that was.
        self._known: set[str] | None = None
        self._known_tried = False
        self._max_rowid = 0
        self._version: int | None = None
        self._synced = 0.0
        self._sync_every = sync_every
        self.hits = 0
        self.misses = 0
        #: Entries found damaged (checksum or key mismatch, undecodable): each asked again.
        self.rejected = 0
        #: Replies too long to cache (over `MAX_STORED_CHARS`): asked again next time.
        self.oversized = 0
        #: Files found damaged and renamed aside (their new names).
        self.set_aside: list[Path] = []
        self.writable = True
        self._db: sqlite3.Connection | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise MindprobeError(f"cannot create the folder of the response cache {self.path} "
                                 f"({exc.strerror}); choose another --cache or use --no-cache"
                                 ) from None
        self._open()

    # -- opening -----------------------------------------------------------------------------
    def _connect(self, read_only: bool = False) -> sqlite3.Connection:
        if read_only:
            db = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True,
                                 timeout=30, isolation_level=None)
        else:
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            # cell_size_check: a damaged page is reported as corrupt, not misread.
            db.execute("PRAGMA cell_size_check=ON")
            if not read_only:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")  # WAL: a crash loses, never damages
            found = db.execute("PRAGMA quick_check(1)").fetchone()
            if not found or found[0] != "ok":
                raise sqlite3.DatabaseError(f"quick_check: {found[0] if found else 'no answer'}")
            if not read_only:
                db.execute(_SCHEMA)
                self._migrate(db)
        except BaseException:
            db.close()
            raise
        return db

    def _migrate(self, db: sqlite3.Connection) -> None:
        """Drop the unverified table older versions wrote (`responses`: key and value, no
        checksum, no request): nothing in a row shows which request its value answered, so
        no entry of it can be verified, and an unverifiable reply is never trusted. Its
        requests are asked again; a one-line notice says so."""
        if not db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?",
                          (_LEGACY,)).fetchone():
            return
        with db:
            db.execute("BEGIN")
            n = db.execute(f"SELECT COUNT(*) FROM {_LEGACY}").fetchone()[0]
            db.execute(f"DROP TABLE {_LEGACY}")
        self._warn(f"the response cache {self.path} was written by an older mindprobe, "
                   f"without checksums: its {n} entries cannot be verified and were dropped "
                   "(their requests are asked again)")

    def _open(self) -> None:
        """Open the file; a damaged one is set aside and a new one made; one that cannot be
        written is read (read-only) if it can be, else the cache is off for this run."""
        try:
            self._db = self._connect()
            return
        except sqlite3.DatabaseError as exc:
            error = exc
        if _code(error) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
            self._off(error)  # held by another process for longer than the timeout
            return
        if _code(error) in _UNWRITABLE:
            self._read_only(error)
            with contextlib.suppress(sqlite3.Error):
                self._db = self._connect(read_only=True) if self.path.exists() else None
            return
        self._rebuild(error)

    def _rebuild(self, exc: BaseException) -> None:
        """Set a damaged file aside and start a new one (the cache is off if either fails)."""
        if self._set_file_aside(exc):
            try:
                self._db = self._connect()
            except sqlite3.DatabaseError as again:
                self._off(again)

    def _off(self, exc: BaseException) -> None:
        self._warn(f"the response cache {self.path} cannot be used ({exc}); this run goes on "
                   "without it")
        self._db, self.writable = None, False

    def _set_file_aside(self, exc: BaseException) -> bool:
        """Rename a damaged file (and its WAL) aside; False when that failed (cache off)."""
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None
        self._known, self._known_tried = None, False  # the new file's keys are read anew
        aside = self.path.with_name(
            f"{self.path.name}.damaged-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
        try:
            os.replace(self.path, aside)
        except OSError as err:
            self._off(f"{exc}; it could not be set aside: {err.strerror}")
            return False
        for suffix in ("-wal", "-shm"):
            with contextlib.suppress(OSError):
                os.replace(f"{self.path}{suffix}", f"{aside}{suffix}")
        self.set_aside.append(aside)
        self._warn(f"the response cache {self.path} is damaged ({exc}); it was set aside as "
                   f"{aside} and a new one started (its replies are asked again)")
        return True

    def _read_only(self, exc: BaseException) -> None:
        if self.writable:
            self._warn(f"the response cache {self.path} cannot be written ({exc}; "
                       f"{free_space(self.path.parent)}); it is read-only for the rest of "
                       "this run, replies not cached are asked and recorded as usual")
        self.writable = False
        self._buffer.clear()

    def _failed(self, exc: sqlite3.Error) -> None:
        """A read or write raised: set a damaged file aside, stop writing an unwritable one;
        a busy file (another process) is only a miss."""
        code = _code(exc)
        if not self.writable:
            return  # read-only (a full disk): what it cannot read is a miss, nothing to rebuild
        if code in _UNWRITABLE:
            self._read_only(exc)
        elif code in _DAMAGED or (code is None and type(exc) is sqlite3.DatabaseError):
            self._rebuild(exc)

    # -- entries -----------------------------------------------------------------------------
    def get(self, key: str) -> dict[str, Any] | None:
        raw = self._buffer.get(key)
        value = orjson.loads(raw) if raw is not None else self._read(key)
        if value is None:
            self.misses += 1
            return None
        self.hits += 1
        return value

    def _read(self, key: str) -> dict[str, Any] | None:
        if self._db is None or self._surely_absent(key):
            return None
        try:
            row = self._db.execute("SELECT key, value, checksum FROM entries WHERE key=?",
                                   (key,)).fetchone()
        except sqlite3.Error as exc:
            self._failed(exc)
            return None
        if row is None:
            return None
        stored, raw, checksum = row
        if stored != key or not isinstance(raw, bytes) or checksum != entry_checksum(key, raw):
            self._reject(key, "its checksum does not match")
            return None
        try:
            value = orjson.loads(redact_known(raw))  # another run's secret: not ours to show
        except orjson.JSONDecodeError:
            self._reject(key, "it is not JSON")
            return None
        return value if isinstance(value, dict) else None

    def _surely_absent(self, key: str) -> bool:
        """True when `key` was in no row at the last sync (at most `sync_every` seconds ago,
        or this process's own flush since): no query needed. The keys are read once this run
        has missed `LOAD_AFTER` times (a run served from the cache never reads them), and
        only when the file has at most `KNOWN_MAX` rows."""
        if self._known is None:
            if self._known_tried or self.misses < LOAD_AFTER:
                return False
            self._known_tried = True
            try:
                assert self._db is not None
                top = self._db.execute("SELECT MAX(rowid) FROM entries").fetchone()[0] or 0
                if top > KNOWN_MAX:
                    return False
                self._version = self._db.execute("PRAGMA data_version").fetchone()[0]
                rows = self._db.execute("SELECT rowid, key FROM entries").fetchall()
            except sqlite3.Error as exc:
                if _code(exc) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                    self._known_tried = False  # another process's moment: try again later
                return False  # the lookup itself will meet the error and handle it
            self._known = {k for _, k in rows}
            self._max_rowid = max((r for r, _ in rows), default=0)
            self._synced = time.monotonic()
        elif time.monotonic() - self._synced > self._sync_every:
            self._sync()
        return self._known is not None and key not in self._known

    def _sync(self) -> None:
        """Add the keys other processes committed since the last sync (SQLite's data_version
        changes only for their commits; new rows take rowids above every earlier one)."""
        self._synced = time.monotonic()
        try:
            assert self._db is not None and self._known is not None
            version = self._db.execute("PRAGMA data_version").fetchone()[0]
            if version == self._version:
                return
            rows = self._db.execute("SELECT rowid, key FROM entries WHERE rowid > ?",
                                    (self._max_rowid,)).fetchall()
        except sqlite3.Error as exc:
            if _code(exc) not in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                self._known = None  # looked up row by row from now on
            return  # busy: the keys as they were, synced again at the next interval
        self._version = version
        self._known.update(k for _, k in rows)
        self._max_rowid = max([self._max_rowid, *(r for r, _ in rows)])
        self._bound_known()

    def _bound_known(self) -> None:
        """Past `KNOWN_MAX` keys (other processes' or this one's own), looked up row by row."""
        if self._known is not None and len(self._known) > KNOWN_MAX:
            self._known = None

    def _reject(self, key: str, why: str) -> None:
        self.rejected += 1
        if self.rejected == 1:
            self._warn(f"the response cache {self.path} holds damaged entries (first: "
                       f"{key[:12]}…, {why}); they are asked again, never used")

    def put(self, key: str, value: dict[str, Any]) -> None:
        """Buffer `value` under `key`: masked for the secrets this process sent (a server that
        echoes a header), and only when within the stored-reply cap (`core.stored_replies`:
        a reply over it is asked again, never served cut)."""
        if not self.writable or self._db is None:
            return
        raw = orjson.dumps(value)
        if len(raw) > MAX_STORED_CHARS and not fits_cache(value):  # short JSON: no long text
            self.oversized += 1
            if self.oversized == 1:
                self._warn(f"a reply over {MAX_STORED_CHARS:,} characters was not cached "
                           f"(the cap on a stored reply); it is asked again next time")
            return
        if not self._buffer:
            self._since = time.monotonic()
        self._buffer[key] = redact_known(raw)
        if len(self._buffer) >= self._batch or time.monotonic() - self._since > self._max_age:
            self.flush()

    def flush(self) -> None:
        if not self._buffer or self._db is None or not self.writable:
            return
        now = time.time()
        rows = [(k, v, entry_checksum(k, v), now) for k, v in self._buffer.items()]
        for _ in range(2):  # once more into a new file when this one was found damaged
            db = self._db
            if db is None or not self.writable:
                break
            try:
                with db:
                    db.execute("BEGIN")
                    db.executemany("INSERT OR REPLACE INTO entries (key, value, checksum, "
                                   "created) VALUES (?, ?, ?, ?)", rows)
                if self._known is not None and db is self._db:
                    self._known.update(self._buffer)
                    self._bound_known()
                break
            except sqlite3.Error as exc:
                if _code(exc) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                    return  # another process holds the file: kept for the next flush
                self._failed(exc)
        self._buffer.clear()

    def close(self) -> None:
        self.flush()
        if self.rejected > 1:
            self._warn(f"{self.rejected} damaged entries of the response cache {self.path} "
                       "were asked again")
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None

    def __len__(self) -> int:
        self.flush()
        if self._db is None:
            return len(self._buffer)
        return self._db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
