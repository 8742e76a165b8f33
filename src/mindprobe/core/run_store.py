"""The writer of one run directory: its manifest and append-only records file, opened, resumed
and closed under a lock (apart from `core.store`'s reading side, which builds on it)."""

from __future__ import annotations

import json
import os
from collections.abc import Collection
from pathlib import Path
from typing import Any

from mindprobe.core.files import open_append, write_file
from mindprobe.core.inputs import read_json
from mindprobe.core.paths import free_space, is_disk_full
from mindprobe.core.records import (
    append_whole,
    dedupe,
    encode_record,
    read_records,
)
from mindprobe.core.requests import TextStore
from mindprobe.core.resume import check_identity, check_planned, within
from mindprobe.core.run_lock import RunLock, now_iso
from mindprobe.core.secrets import redact, redact_json
from mindprobe.errors import DataError, DiskFull, UsageError

MANIFEST = "manifest.json"
RECORDS = "records.jsonl"
JUDGEMENTS_DIR = "judgements"
#: Manifest fields that define a run: resuming with different values would mix two experiments.
IDENTITY_FIELDS = ("benchmark", "variant", "model", "config", "data")
#: Manifest fields written after a run that its resume keeps (the tracker runs it went to).
KEPT_FIELDS = ("trackers",)


def _asked_again(record: dict[str, Any]) -> bool:
    """Whether --retry-errors asks the item again: it ended in an error, or it did not fit
    the context window (`core.fit`; a larger window, or another model, may fit it now)."""
    return "error" in record or "does_not_fit" in record


def write_json_atomic(path: Path, obj: Any) -> None:
    """`obj` as `path`, a file of mindprobe's own (a run's manifest, a profile's
    profile.json), whole or not at all (`core.files`). On a full disk, where a second copy
    finds no room, an existing file is overwritten in place (the manifest must still say the
    run was interrupted); the temporary file never stays. OSError is the caller's to word."""
    text = json.dumps(obj, indent=2, ensure_ascii=False, default=str)
    # no secret reaches a manifest (core.secrets)
    write_file(path, redact(text) + "\n", replace=True, run_file=True, in_place_when_full=True)


class RunStore:
    """Owns one records file of a run directory (the item records, or one judge's verdicts),
    locked against a second writing process."""

    def __init__(self, run_dir: Path, records_name: str = RECORDS,
                 manifest_name: str = MANIFEST,
                 identity_fields: tuple[str, ...] = IDENTITY_FIELDS,
                 conflict_hint: str = "use another --runs-dir (or --name) to keep both") -> None:
        self.conflict_hint = conflict_hint
        self.dir = Path(run_dir)
        self.manifest_path = self.dir / manifest_name
        self.records_path = self.dir / records_name
        self.identity_fields = identity_fields
        self.manifest: dict[str, Any] = {}
        self._fd: int | None = None
        self._lock: RunLock | None = None
        #: Long texts shared by items, written once (core.requests); set when opened.
        self.texts: TextStore | None = None
        #: Records dropped on open because their id was already recorded (older versions).
        self.duplicates_dropped = 0

    # -- opening / resuming ----------------------------------------------------------------
    def exists(self) -> bool:
        return self.manifest_path.exists()

    def load_manifest(self) -> dict[str, Any]:
        if not self.manifest_path.exists() and not self.manifest_path.is_symlink():
            raise DataError(f"no run at {self.dir} ({MANIFEST} is missing)")
        self.manifest = read_json(self.manifest_path, "the run manifest", "manifest", DataError)
        if not isinstance(self.manifest, dict):
            raise DataError(f"{self.manifest_path} is not a run manifest (a JSON object)")
        return self.manifest

    def open(self, manifest: dict[str, Any], *, retry_errors: bool = False,
             planned: dict[str, str | None] | None = None,
             sizes: Collection[str] = ()) -> dict[str, dict]:
        """Create or resume the run; return the finished records by item id.

        Records that ended in an error are kept as finished unless `retry_errors`, in which case
        they are removed from the file (atomically) so the retried item appears exactly once.
        `planned`: the items the run is now to have (id -> `Item.key`), which must include
        every recorded one unchanged; `sizes`: config keys that may differ (`core.resume`).
        """
        try:
            self.records_path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot create the run directory {self.dir}: {exc.strerror} "
                             "(is --runs-dir a writable folder?)") from None
        self._lock = RunLock(self.dir)
        self._lock.acquire()
        try:
            return self._open(manifest, retry_errors, planned, sizes)
        except BaseException:
            self._lock.release()
            self._lock = None
            raise

    def _open(self, manifest: dict[str, Any], retry_errors: bool,
              planned: dict[str, str | None] | None,
              sizes: Collection[str]) -> dict[str, dict]:
        manifest = redact_json(manifest)  # as written, so a resume compares like with like
        if self.exists():
            old = self.load_manifest()
            check_identity(self.dir, old, manifest, self.identity_fields, self.conflict_hint,
                           sizes)
            manifest = {**manifest, "created": old.get("created", manifest.get("created")),
                        **{k: old[k] for k in KEPT_FIELDS if k in old}}
            if "deterministic" in manifest and "deterministic" in old:
                # a run resumed under other settings is only as reproducible as its worst part
                parts = (old["deterministic"], manifest["deterministic"])
                manifest["deterministic"] = (False if False in parts else
                                             None if None in parts else True)
        records = read_records(self.records_path, repair=True,
                               ranges=self._ranges(manifest))
        done, self.duplicates_dropped = dedupe(records)
        if planned is not None:
            check_planned(self.dir, done, planned, self.conflict_hint)
        if retry_errors and any(_asked_again(r) for r in done.values()):
            done = {k: r for k, r in done.items() if not _asked_again(r)}
            self._rewrite(done.values())
        elif self.duplicates_dropped:
            self._rewrite(done.values())
        manifest["status"] = "running"
        manifest["started"] = now_iso()
        manifest.pop("ended", None)
        self.manifest = manifest
        try:
            write_json_atomic(self.manifest_path, manifest)
            self._fd = open_append(self.records_path)
            self.texts = TextStore(self.records_path.parent)
        except OSError as exc:
            if is_disk_full(exc):
                raise self.disk_full() from None
            raise UsageError(f"cannot write the run in {self.dir}: {exc.strerror} "
                             "(choose a writable --runs-dir)") from None
        return done

    def disk_full(self, resume: str | None = None) -> DiskFull:
        """The one message of a run stopped by a full disk: where, how much room is left."""
        how = f"resume with: {resume}" if resume else "re-run the same command to resume"
        return DiskFull(f"no space left on the disk holding {self.dir} "
                        f"({free_space(self.dir)}); the run stopped, every finished item is "
                        f"kept. Free some space there, then {how}")

    def left(self, ids: list[str], retry_errors: bool = False) -> int:
        """How many of the items `ids` a (re-)run still has to ask: not recorded, or (with
        `retry_errors`) recorded with an error."""
        if not self.exists():
            return len(ids)
        done = dedupe(self.records())[0]
        return sum(1 for i in ids if i not in done or (retry_errors and _asked_again(done[i])))

    def settled(self, manifest: dict[str, Any], sizes: Collection[str] = ()) -> dict[str, Any]:
        """For a re-run with nothing left to ask, whose models are therefore not started: the
        recorded values of what only started models add (config keys a benchmark's `prepare`
        derives from the model, what a server says it serves), where everything the plan
        itself knows (but its `sizes`) agrees with the record; otherwise `manifest` as it is,
        and `open` says what differs."""
        if not self.exists():
            return manifest
        old = self.load_manifest()
        out = dict(manifest)
        config = {k: v for k, v in (manifest.get("config") or {}).items() if k not in sizes}
        if isinstance(old.get("config"), dict) and within(config, old["config"]):
            out["config"] = {**old["config"], **manifest.get("config", {})}
        if "model_identity" in old and within(manifest.get("model_identity"),
                                              old["model_identity"]):
            out["model_identity"] = old["model_identity"]
        return out

    def _rewrite(self, records: Any) -> None:
        data = b"".join(encode_record(rec) for rec in records)
        try:
            write_file(self.records_path, data, replace=True, run_file=True)
        except OSError as exc:
            if is_disk_full(exc):
                raise self.disk_full() from None
            raise

    # -- writing ---------------------------------------------------------------------------
    def append(self, record: dict[str, Any]) -> None:
        self.append_encoded(encode_record(record))

    def append_encoded(self, data: bytes) -> None:
        """Whole lines made by `encode_record`, in one write call (`append_whole`: never a
        torn line left behind)."""
        assert self._fd is not None, "store not open"
        append_whole(self._fd, data)

    def close(self, status: str, summary: dict[str, Any] | None = None) -> None:
        try:
            unsynced: OSError | None = None  # the manifest is written even then
            if self._fd is not None:
                fd, self._fd = self._fd, None
                try:
                    os.fsync(fd)
                except OSError as exc:
                    unsynced = exc
                finally:
                    os.close(fd)
            self._finish(status, summary)
            if unsynced is not None:
                raise unsynced
        finally:
            if self._lock is not None:
                self._lock.release()
                self._lock = None

    def _finish(self, status: str, summary: dict[str, Any] | None) -> None:
        self.manifest["status"] = status
        self.manifest["ended"] = now_iso()
        if summary is not None:
            self.manifest["summary"] = summary
        write_json_atomic(self.manifest_path, self.manifest)

    def records(self) -> list[dict[str, Any]]:
        """Its records, those left out as damaged excepted (`core.records.scan_records`)."""
        return read_records(self.records_path, ranges=self._ranges(self.manifest or None))

    def _ranges(self, manifest: dict[str, Any] | None) -> dict[str, tuple[float, float]]:
        """The ranges the benchmark's records keep to; none for a judge's records."""
        if self.records_path.name != RECORDS:
            return {}
        if manifest is None:
            try:
                manifest = self.load_manifest() if self.exists() else {}
            except DataError:
                manifest = {}
        return record_ranges(manifest.get("benchmark"))


def record_ranges(benchmark: Any) -> dict[str, tuple[float, float]]:
    """`Benchmark.record_ranges` of a registered benchmark, read without importing it."""
    from mindprobe.registry import BENCHMARKS

    found = BENCHMARKS.get(benchmark) if isinstance(benchmark, str) else None
    return dict(found.record_ranges) if found is not None else {}
