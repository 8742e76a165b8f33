"""A run on disk: `manifest.json` plus append-only `records.jsonl`, one line per finished item.

Each record goes out in a single `write(2)` on an O_APPEND descriptor, so a kill -9 can tear
at most the last line; reopening drops that torn tail. The records file is the truth: metrics
are always recomputed from it, so a resumed run ends with exactly the numbers of an
uninterrupted one.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from mindprobe import __version__
from mindprobe.errors import DataError, UsageError

MANIFEST = "manifest.json"
RECORDS = "records.jsonl"
#: Manifest fields that define a run: resuming with different values would mix two experiments.
IDENTITY_FIELDS = ("benchmark", "variant", "model", "config", "data")


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def write_json_atomic(path: Path, obj: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, indent=2, ensure_ascii=False, default=str) + "\n")
    os.replace(tmp, path)


def read_records(path: Path, *, repair: bool = False) -> list[dict[str, Any]]:
    """All complete records of a records.jsonl. A torn last line (no newline) is ignored and,
    with `repair`, cut off; a malformed complete line is a DataError naming file and line."""
    if not path.exists():
        return []
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
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
    return records


class RunStore:
    """Owns one run directory. Not shared between processes at once (one writer per run)."""

    def __init__(self, run_dir: Path) -> None:
        self.dir = Path(run_dir)
        self.manifest_path = self.dir / MANIFEST
        self.records_path = self.dir / RECORDS
        self.manifest: dict[str, Any] = {}
        self._fd: int | None = None

    # -- opening / resuming ----------------------------------------------------------------
    def exists(self) -> bool:
        return self.manifest_path.exists()

    def load_manifest(self) -> dict[str, Any]:
        try:
            self.manifest = json.loads(self.manifest_path.read_text())
        except FileNotFoundError:
            raise DataError(f"no run at {self.dir} ({MANIFEST} is missing)") from None
        except ValueError:
            raise DataError(f"{self.manifest_path} is not valid JSON") from None
        return self.manifest

    def open(self, manifest: dict[str, Any], *, retry_errors: bool = False) -> dict[str, dict]:
        """Create or resume the run; return the finished records by item id.

        Records that ended in an error are kept as finished unless `retry_errors`, in which case
        they are removed from the file (atomically) so the retried item appears exactly once.
        """
        self.dir.mkdir(parents=True, exist_ok=True)
        if self.exists():
            old = self.load_manifest()
            for key in IDENTITY_FIELDS:
                if old.get(key) != manifest.get(key):
                    raise UsageError(
                        f"{self.dir} holds a run with a different {key} "
                        f"({_short(old.get(key))} vs {_short(manifest.get(key))}); "
                        "use another --runs-dir to keep both"
                    )
            manifest = {**manifest, "created": old.get("created", manifest.get("created"))}
        records = read_records(self.records_path, repair=True)
        done: dict[str, dict] = {}
        duplicates = False
        for rec in records:
            duplicates |= rec["id"] in done
            done[rec["id"]] = rec
        if retry_errors and any("error" in r for r in done.values()):
            done = {k: r for k, r in done.items() if "error" not in r}
            self._rewrite(done.values())
        elif duplicates:
            self._rewrite(done.values())
        manifest["status"] = "running"
        manifest["started"] = now_iso()
        manifest.pop("ended", None)
        self.manifest = manifest
        write_json_atomic(self.manifest_path, manifest)
        self._fd = os.open(self.records_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        return done

    def _rewrite(self, records: Any) -> None:
        tmp = self.records_path.with_name(RECORDS + ".tmp")
        with open(tmp, "wb") as f:
            for rec in records:
                f.write(encode_record(rec))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.records_path)

    # -- writing ---------------------------------------------------------------------------
    def append(self, record: dict[str, Any]) -> None:
        assert self._fd is not None, "store not open"
        os.write(self._fd, encode_record(record))

    def close(self, status: str, summary: dict[str, Any] | None = None) -> None:
        if self._fd is not None:
            os.fsync(self._fd)
            os.close(self._fd)
            self._fd = None
        self.manifest["status"] = status
        self.manifest["ended"] = now_iso()
        if summary is not None:
            self.manifest["summary"] = summary
        write_json_atomic(self.manifest_path, self.manifest)

    def records(self) -> list[dict[str, Any]]:
        return read_records(self.records_path)


_RECORD_OPTS = orjson.OPT_APPEND_NEWLINE | orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


def encode_record(record: dict[str, Any]) -> bytes:
    """One JSON line (UTF-8, NaN as null, unknown types as str), ready for a single write."""
    return orjson.dumps(record, default=str, option=_RECORD_OPTS)


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def iter_runs(runs_dir: Path) -> Iterator[Path]:
    """Every run directory under `runs_dir` (any depth), sorted."""
    if not runs_dir.is_dir():
        return
    yield from sorted(p.parent for p in runs_dir.rglob(MANIFEST))


def base_manifest(**fields: Any) -> dict[str, Any]:
    return {"mindprobe_version": __version__, "created": now_iso(), **fields}
