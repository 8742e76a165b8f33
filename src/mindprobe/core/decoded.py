"""Decoded official files memoised on disk (marshal, digest-checked), whole or group by group:
so a run pays seconds of decompressing and parsing once, not at every start."""

from __future__ import annotations

import hashlib
import marshal
import mmap
import threading
import zlib
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from mindprobe.core.files import write_file
from mindprobe.core.paths import cache_dir
from mindprobe.core.process import gc_paused, usable_cpus
from mindprobe.errors import DiskFull, UsageError

_DECODED_MAGIC = b"mindprobe-decoded-v2\n"
_GROUPED_MAGIC = b"mindprobe-grouped-v2\n"
#: Bytes of the digest each stored body (or group) carries, checked before it is unmarshalled:
#: `marshal` reads a flipped byte as another value, silently.
_DIGEST = 16


def _digest(body: bytes | memoryview) -> bytes:
    return hashlib.blake2b(body, digest_size=_DIGEST).digest()


def _verified(blob: bytes | memoryview) -> memoryview:
    """The body behind a digest, or ValueError (a damaged entry: made anew)."""
    view = memoryview(blob)
    if len(view) < _DIGEST or _digest(view[_DIGEST:]) != view[:_DIGEST]:
        raise ValueError("damaged cache entry (digest mismatch)")
    return view[_DIGEST:]


def _entry(digest: str, kind: str) -> Path:
    return cache_dir() / "decoded" / f"{kind}-{digest}.marshal"


def is_memoised(sha256: str, kind: str) -> bool:
    """Whether `decoded_groups` holds an entry of `kind` for `sha256` (made by an earlier
    call, or being written behind one in this process): a caller may then skip what making
    it would cost, e.g. a dry run's build."""
    entry = _entry(sha256, f"{kind}-grouped")
    return entry in _WRITERS or entry.is_file()


def _cache_path(path: Path, sha256: str | None, kind: str) -> Path:
    return _entry(sha256 or hashlib.sha256(path.read_bytes()).hexdigest(), kind)


def _hit(cache: Path, magic: bytes) -> memoryview | None:
    """The memo's body, mapped, not read (a caller that needs a few groups of a 70 MB entry
    pays for those); None when it is missing, unreadable or not ours. A write of it still
    under way in this process is waited for first."""
    writer = _WRITERS.get(cache)
    if writer is not None:
        writer.join()
    try:
        with open(cache, "rb") as f:
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        if mapped[:len(magic)] == magic:
            return memoryview(mapped)[len(magic):]
        mapped.close()  # (Windows cannot replace a mapped file)
    except (OSError, ValueError):  # missing, unreadable or empty
        pass
    return None


def _store(cache: Path, chunks: Iterable[bytes]) -> None:
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        write_file(cache, chunks, replace=True)
    except (OSError, UsageError, DiskFull):  # a read-only or full cache only costs speed
        pass  # and keeps no partial copy (core.files)


#: Memos being written behind the caller, by path (`_write_behind`).
_WRITERS: dict[Path, threading.Thread] = {}


def _write_behind(cache: Path, make: Callable[[], list[bytes]]) -> None:
    """Store `make()`'s chunks as `cache` in a thread of its own, so a first run's requests
    do not wait for 70 MB to be framed, hashed and written (hashing and writing release the
    GIL). The thread is not a daemon: the process ends after the memo is whole, and
    core.files never leaves a partial one."""
    def work() -> None:
        try:
            _store(cache, make())
        finally:
            _WRITERS.pop(cache, None)

    # daemon=False even when started from a daemon thread (a profile plans in those): the
    # process then exits only once the memo is whole
    thread = threading.Thread(target=work, name=f"mindprobe-memo-{cache.name[:24]}",
                              daemon=False)
    _WRITERS[cache] = thread
    thread.start()


def finish_writes() -> None:
    """Wait for every memo still being written (a test, a benchmark that reads the file)."""
    for thread in list(_WRITERS.values()):
        thread.join()


def _memoised(path: Path, sha256: str | None, kind: str, magic: bytes,
              encode: Callable[[], bytes], fresh: bool = False) -> memoryview:
    """The bytes `encode()` makes of `path`, memoised on disk by the source's sha256 (a hit
    is mapped: `_hit`). `fresh`: the entry was found corrupt; encode and write it again."""
    cache = _cache_path(path, sha256, kind)
    if not fresh and (hit := _hit(cache, magic)) is not None:
        return hit
    body = encode()
    _store(cache, [magic, body])
    return memoryview(body)


def decoded(path: Path, sha256: str | None, kind: str, decode: Callable[[Path], Any]) -> Any:
    """`decode(path)`, memoised on disk by the source file's sha256 (verified before use).

    Decompressing and parsing an official file costs seconds at every run; its decoded form
    (plain lists, dicts, strings and numbers, stored with `marshal`) loads in a fraction of
    that. The key is the sha256 of the bytes actually read, so an edited or replaced source is
    decoded again, never served stale.
    """
    made: list[Any] = []

    def encode() -> bytes:
        made.append(decode(path))
        body = marshal.dumps(made[0])
        return _digest(body) + body

    body = _memoised(path, sha256, kind, _DECODED_MAGIC, encode)
    if made:
        return made[0]
    try:
        with gc_paused():
            return marshal.loads(_verified(body))
    except (EOFError, ValueError, TypeError):  # a corrupt cache entry: decoded and rewritten
        body.release()
        _memoised(path, sha256, kind, _DECODED_MAGIC, encode, fresh=True)
        return made[0]


class Grouped:
    """Records of a file stored group by group (a WorldSense tuple, say): `keys` and `sizes`
    are read at once, `load` unmarshals only the groups asked for, so a run of 200 items does
    not decode 87,000."""

    def __init__(self, keys: list[Any], sizes: list[int], fetch: Callable[[int], list[Any]],
                 release: Callable[[], None] | None = None) -> None:
        self.keys, self.sizes, self._fetch, self._release = keys, sizes, fetch, release
        self._index = {k: i for i, k in enumerate(keys)}
        #: Makes this data anew from its source (a cached entry found corrupt while loading).
        self.rebuild: Callable[[], Grouped] | None = None

    def load(self, keys: Iterable[Any]) -> list[Any]:
        """The records of `keys`' groups, group after group, each in file order."""
        keys = list(keys)
        try:
            return self._load(keys)
        except (EOFError, ValueError, TypeError):  # damage the header check could not see
            if self.rebuild is None:
                raise
            if self._release is not None:
                self._release()
            fresh = self.rebuild()
            self._fetch, self._release, self.rebuild = fresh._fetch, fresh._release, None
            return self._load(keys)

    def _load(self, keys: list[Any]) -> list[Any]:
        out: list[Any] = []
        with gc_paused():
            for k in keys:
                out.extend(self._fetch(self._index[k]))
        return out

    def all(self) -> list[Any]:
        return self.load(self.keys)

    @classmethod
    def of(cls, records: Iterable[Any], key: Callable[[Any], Any]) -> Grouped:
        """Group records in memory (generated data: nothing to cache)."""
        groups = list(_group(records, key).items())
        return cls([k for k, _ in groups], [len(g) for _, g in groups],
                   lambda i: groups[i][1])

    @classmethod
    def _parse(cls, blob: bytes | memoryview) -> Grouped:
        n = int.from_bytes(blob[:8], "little")
        keys, sizes, spans, digests, *packed = marshal.loads(_verified(blob[8:8 + _DIGEST + n]))
        body = memoryview(blob)[8 + _DIGEST + n:]
        if len(keys) != len(spans) or (spans and spans[-1][1] != len(body)):
            raise ValueError("inconsistent grouped cache")
        def inflate(chunk: memoryview) -> bytes | memoryview:
            return zlib.decompress(chunk) if packed and packed[0] else chunk


        def fetch(i: int) -> list[Any]:
            chunk = body[spans[i][0]:spans[i][1]]
            if _digest(chunk) != digests[i]:
                raise ValueError("damaged cache entry (digest mismatch)")
            return marshal.loads(inflate(chunk))

        return cls(keys, sizes, fetch, body.release)


def _group(records: Iterable[Any], key: Callable[[Any], Any]) -> dict[Any, list[Any]]:
    groups: dict[Any, list[Any]] = {}
    for r in records:
        groups.setdefault(key(r), []).append(r)
    return groups


def _compressed(blobs: Iterable[bytes], batch: int = 64) -> list[bytes]:
    """Each blob zlib-compressed at the fastest level, on every core (zlib releases the GIL),
    a batch at a time so the uncompressed copies do not pile up."""
    out: list[bytes] = []
    with ThreadPoolExecutor(min(8, usable_cpus())) as pool:
        chunk: list[bytes] = []
        for blob in blobs:
            chunk.append(blob)
            if len(chunk) == batch:
                out += pool.map(zlib.compress, chunk, [1] * len(chunk))
                chunk = []
        out += pool.map(zlib.compress, chunk, [1] * len(chunk))
    return out


def _encode_groups(groups: dict[Any, list[Any]], packed: bool = False) -> list[bytes]:
    """Each group marshalled (and compressed where `packed`, on every core), in order."""
    dumped = (marshal.dumps(g) for g in groups.values())
    return _compressed(dumped) if packed else list(dumped)


def _framed(keys: list[Any], sizes: list[int], parts: list[bytes], packed: bool) -> list[bytes]:
    """A grouped memo's body as chunks: the header's length and digest, the header (keys,
    sizes, each part's span and digest), then the parts (never joined: 70 MB copied once less)."""
    spans, at = [], 0
    for p in parts:
        spans.append((at, at + len(p)))
        at += len(p)
    header = marshal.dumps((keys, sizes, spans, [_digest(p) for p in parts], packed))
    return [len(header).to_bytes(8, "little") + _digest(header) + header, *parts]


def decoded_groups(path: Path, sha256: str | None, kind: str,
                   decode: Callable[[Path], list[Any]], key: Callable[[Any], Any],
                   packed: bool = False) -> Grouped:
    """`decode(path)` grouped by `key`, memoised on disk like `decoded` (same key, same
    verification), so later loads read only the groups they use. `packed`: each group
    compressed (zlib, fastest level), for long texts a load touches a few of (SORT's
    excerpts: 290 MB of text, a quick plan reads 3).

    A miss returns as soon as each group is marshalled: its groups are served from those
    bytes (fresh objects at each load, as from the file, so a caller that changes a record
    never changes the memo) while the memo is framed, hashed and written behind it."""
    kind = f"{kind}-grouped"
    cache = _cache_path(path, sha256, kind)

    def encode() -> bytes:
        groups = _group(decode(path), key)
        return b"".join(_framed(list(groups), [len(g) for g in groups.values()],
                                _encode_groups(groups, packed), packed))

    def rebuild() -> Grouped:
        return Grouped._parse(_memoised(path, sha256, kind, _GROUPED_MAGIC, encode, fresh=True))

    body = _hit(cache, _GROUPED_MAGIC)
    if body is None:
        groups = _group(decode(path), key)
        keys, sizes = list(groups), [len(g) for g in groups.values()]
        parts = _encode_groups(groups, packed)
        del groups
        _write_behind(cache, lambda: [_GROUPED_MAGIC, *_framed(keys, sizes, parts, packed)])
        return Grouped(keys, sizes, lambda i: marshal.loads(
            zlib.decompress(parts[i]) if packed else parts[i]))
    try:
        grouped = Grouped._parse(body)
    except (EOFError, ValueError, TypeError, IndexError):  # a corrupt entry: made anew
        body.release()
        return rebuild()
    grouped.rebuild = rebuild
    return grouped
