"""The records file of a run: one JSON line per finished item, read first-wins.

Lines are encoded whole (`encode_record`) so the store can write them in one `write(2)`; a
torn last line (a kill -9 mid-write) is ignored on read and cut off on repair.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from mindprobe.core.files import cut_to
from mindprobe.core.inputs import check_regular, out_of_range
from mindprobe.core.secrets import redact_known
from mindprobe.core.stored_replies import encoded_once
from mindprobe.errors import DataError


def append_whole(fd: int, data: bytes) -> None:
    """`data` (whole lines) appended to the O_APPEND file `fd` in one write call; if the OS
    takes only part (a full disk) and then fails, the part is cut off again, so no torn line is
    left in the middle of the file for a later write to follow."""
    done = os.write(fd, data)
    if done == len(data):
        return
    view = memoryview(data)
    try:
        while done < len(data):
            done += os.write(fd, view[done:])
    except BaseException:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, os.fstat(fd).st_size - done)
        raise


def read_records(path: Path, *, repair: bool = False,
                 ranges: Mapping[str, tuple[float, float]] | None = None) -> list[dict[str, Any]]:
    """All complete records of a records.jsonl. A torn last line (no newline) is ignored and,
    with `repair`, cut off; a malformed complete line is a DataError naming file and line; a
    record with a field outside `ranges` is left out (`scan_records`)."""
    return scan_records(path, repair=repair, ranges=ranges).records


@dataclass
class Scan:
    """A records file as read: its usable records, torn last lines (0 or 1) and the records
    left out as damaged (one `file:line: why` each)."""

    records: list[dict[str, Any]] = field(default_factory=list)
    torn: int = 0
    damaged: list[str] = field(default_factory=list)


def damage(record: dict[str, Any], ranges: Mapping[str, tuple[float, float]]) -> str | None:
    """Why a record cannot be believed: a numeric field outside its range (the benchmark's
    `record_ranges`); None when it can."""
    for name, (lo, hi) in ranges.items():
        value = record.get(name)
        if value is None or isinstance(value, str):
            continue
        problem = out_of_range(value, lo, hi)
        if problem is not None:
            return f"field {name!r}: {problem}"
    return None


def scan_records(path: Path, *, repair: bool = False,
                 ranges: Mapping[str, tuple[float, float]] | None = None) -> Scan:
    """Every complete record of `path` (see `read_records`), with what was left out."""
    scan = Scan()
    if not path.exists():
        return scan
    check_regular(path, "the records file", "records", DataError)
    tail_at = None
    with open(path, "rb") as f:  # line by line: a run of 10 MB replies is read once, not thrice
        offset = 0
        for lineno, line in enumerate(f, 1):
            if not line.endswith(b"\n"):
                tail_at, scan.torn = offset, int(bool(line.strip()))
                break
            offset += len(line)
            if not line.strip():
                continue
            try:
                rec = orjson.loads(line)
            except orjson.JSONDecodeError:
                raise DataError(
                    f"{path}:{lineno}: malformed record line; the file was edited or corrupted "
                    "(delete that line to re-run the item)"
                ) from None
            if not isinstance(rec, dict) or "id" not in rec:
                raise DataError(f"{path}:{lineno}: record without an 'id' field")
            why = damage(rec, ranges) if ranges else None
            if why is not None:
                scan.damaged.append(f"{path}:{lineno}: record {rec['id']!r} left out as "
                                    f"damaged ({why}); resume the run to ask the item again")
                continue
            scan.records.append(rec)
    if tail_at is not None and repair:
        cut_to(path, tail_at)
    return scan


_RECORD_OPTS = orjson.OPT_APPEND_NEWLINE | orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


def encode_record(record: dict[str, Any]) -> bytes:
    """One JSON line (UTF-8, NaN as null, unknown types as str), ready for a single write;
    a secret this process holds (an API key, say, echoed in an error) is masked, and each
    reply is kept once and bounded (`core.stored_replies`; the record itself is bounded in
    place, so what a run keeps in memory is what its file holds)."""
    return redact_known(encoded_once(record, _encode))


def _encode(record: dict[str, Any]) -> bytes:
    return orjson.dumps(record, default=str, option=_RECORD_OPTS)


def dedupe(records: list[dict[str, Any]]) -> tuple[dict[str, dict[str, Any]], int]:
    """Records by id, the first of each id winning; and how many later copies were dropped."""
    done: dict[str, dict[str, Any]] = {}
    dropped = 0
    for rec in records:
        if rec["id"] in done:
            dropped += 1
        else:
            done[rec["id"]] = rec
    return done, dropped
