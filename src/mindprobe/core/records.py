"""The records file of a run: one JSON line per finished item, read first-wins.

Lines are encoded whole (`encode_record`) so the store can write them in one `write(2)`; a
torn last line (a kill -9 mid-write) is ignored on read and cut off on repair.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from mindprobe.errors import DataError


def read_records(path: Path, *, repair: bool = False) -> list[dict[str, Any]]:
    """All complete records of a records.jsonl. A torn last line (no newline) is ignored and,
    with `repair`, cut off; a malformed complete line is a DataError naming file and line."""
    return read_records_torn(path, repair=repair)[0]


def read_records_torn(path: Path, *, repair: bool = False) -> tuple[list[dict[str, Any]], int]:
    """`read_records`, and how many torn last lines it left out (0 or 1), which a run's state
    counts (`core.run_state`) rather than silently dropping."""
    if not path.exists():
        return [], 0
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    torn = int(bool(data[end:].strip()))
    if end < len(data) and repair:
        with open(path, "r+b") as f:
            f.truncate(end)
    records = []
    for lineno, line in enumerate(data[:end].splitlines(), 1):
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
        records.append(rec)
    return records, torn


_RECORD_OPTS = orjson.OPT_APPEND_NEWLINE | orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


def encode_record(record: dict[str, Any]) -> bytes:
    """One JSON line (UTF-8, NaN as null, unknown types as str), ready for a single write."""
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
