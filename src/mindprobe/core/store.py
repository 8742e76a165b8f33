"""A run on disk: `manifest.json` plus append-only `records.jsonl`, one line per finished item.

Records go out as whole lines in a single `write(2)` on an O_APPEND descriptor (records that
finish together share one), so a kill -9 can tear at most the last line; reopening drops that
torn tail, and a write the OS takes only part of before failing is cut back. The records file
is the truth: metrics are always recomputed from it, so a resumed run ends with exactly the
numbers of an uninterrupted one.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mindprobe.core.files import open_append, write_file
from mindprobe.core.inputs import read_json
from mindprobe.core.paths import free_space, is_disk_full
from mindprobe.core.records import (
    append_whole,
    dedupe,
    encode_record,
    read_records,
    scan_records,
)
from mindprobe.core.requests import TEXTS, TextStore, read_texts
from mindprobe.core.resume import check_identity, check_planned, within
from mindprobe.core.run_lock import RunLock, now_iso
from mindprobe.core.run_state import RunState, derive
from mindprobe.core.secrets import redact, redact_json
from mindprobe.errors import DataError, DiskFull, UsageError
from mindprobe.version import __version__

if TYPE_CHECKING:
    from mindprobe.core.benchmark import RunPlan
    from mindprobe.core.results import Results

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


def iter_runs(runs_dir: Path) -> Iterator[Path]:
    """Every run directory under `runs_dir` (any depth), sorted."""
    if not runs_dir.is_dir():
        return
    yield from sorted(p.parent for p in runs_dir.rglob(MANIFEST))


def base_manifest(**fields: Any) -> dict[str, Any]:
    return {"mindprobe_version": __version__, "created": now_iso(), **fields}


@dataclass
class Run:
    """A run directory as analysis sees it: manifest, records (deduplicated), model label."""

    dir: Path
    manifest: dict[str, Any]
    records: list[dict[str, Any]]
    duplicates_dropped: int = 0
    warnings: list[str] = field(default_factory=list)
    #: Torn last lines of its records file (a write cut off by a kill), not in `records`.
    torn: int = 0

    @functools.cached_property
    def texts(self) -> dict[str, str]:
        """The run's shared long texts by sha256 (what records reference as {"sha256": …})."""
        return read_texts(self.dir / TEXTS)

    @property
    def benchmark(self) -> str:
        return str(self.manifest.get("benchmark", "?"))

    @property
    def variant(self) -> str:
        return str(self.manifest.get("variant", "?"))

    @property
    def prompting(self) -> str:
        return str(self.manifest.get("prompting", "basic"))

    @property
    def model_label(self) -> str:
        label = self.manifest.get("model_label")
        if label:
            return str(label)
        return self.dir.name.split("___", 1)[-1]  # runs made before the label was recorded

    @functools.cached_property
    def state(self) -> RunState:
        """What the run came to, with its counts (`core.run_state`: the one derivation)."""
        held = (self.manifest.get("status") == "running"
                and RunLock(self.dir).is_held_elsewhere())
        return derive(self.manifest, self.records, self.torn, held)

    @property
    def status(self) -> str:
        """finished, partial, interrupted, failed or running (`state` has the counts)."""
        return self.state.state

    @property
    def data_dir(self) -> Path | None:
        """The benchmark data folder the run read its files from (None: the data cache)."""
        recorded = self.manifest.get("data_dir")
        return Path(recorded) if isinstance(recorded, str) and recorded else None

    def plan(self) -> RunPlan:
        """What `results()` needs of a finished run, rebuilt from its manifest alone: its
        typed options, config, data provenance and labels (no items). The one place that
        does it, for analyse, judge, report and the Python API."""
        from mindprobe.core.benchmark import RunPlan
        from mindprobe.core.options import NoOptions, rebuild_options
        from mindprobe.registry import options_class

        m = self.manifest
        config = m.get("config", {})
        try:
            cls: type = options_class(self.benchmark)
        except UsageError:  # a plugin no longer installed: its records still load
            cls = NoOptions
        return RunPlan(items=[], prompting=self.prompting, config=config,
                       options=rebuild_options(cls, m.get("options"), config),
                       provenance=m.get("data", {}), model_label=self.model_label,
                       data_dir=self.data_dir)


    def results(self, judge_label: str | None = None, data_dir: str | Path | None = None,
                plan: RunPlan | None = None) -> Results:
        """Its results from the records alone, as `analyse`, the report and the Python API
        show them: every judge's verdicts (`judge_label`'s primary), the data read from the
        folder the run used (or `data_dir`), a headline over a subset of the items labelled
        so (`core.run_state.label_subset`). `plan`: the run's plan when the caller made it."""
        from mindprobe.core.data import benchmark_folder
        from mindprobe.core.fit import score_fitting
        from mindprobe.core.results import failed_results
        from mindprobe.core.run_state import label_subset
        from mindprobe.registry import get_benchmark

        bench = get_benchmark(self.benchmark)
        plan = plan or self.plan()
        if data_dir:
            plan.data_dir = benchmark_folder(bench.name, data_dir, bench.data_files)
        judgements = read_judgements(self.dir)
        res = score_fitting(bench.name, self.records, lambda rs: failed_results(bench.name, rs)
                            or bench.results_with_judgements(rs, plan, judgements, judge_label))
        return label_subset(res, self.state)


def settle_interrupted(run_dir: Path) -> int | None:
    """After an interrupt: a run this process left `running` (Ctrl-C before its store closed)
    is marked `interrupted`; returns how many records it holds (None: no run there yet)."""
    store = RunStore(Path(run_dir))
    if not store.exists():
        return None
    manifest = store.load_manifest()
    if manifest.get("status") == "running" and not RunLock(store.dir).is_held_elsewhere():
        manifest.update(status="interrupted", ended=now_iso())
        write_json_atomic(store.manifest_path, manifest)
    return len(dedupe(store.records())[0])


def load_run(run_dir: Path | str, benchmark: str | None = None) -> Run:
    """Load a run; a records file holding an id twice (older versions) is read first-wins."""
    store = RunStore(Path(run_dir))
    manifest = store.load_manifest()
    if benchmark is not None and manifest.get("benchmark") != benchmark:
        raise UsageError(f"{run_dir} is a {manifest.get('benchmark')} run, not {benchmark}")
    scan = scan_records(store.records_path, ranges=record_ranges(manifest.get("benchmark")))
    done, dropped = dedupe(scan.records)
    run = Run(Path(run_dir), manifest, list(done.values()), dropped, torn=scan.torn,
              warnings=list(scan.damaged))
    if dropped:
        run.warnings.append(
            f"{store.records_path} holds {dropped} duplicated record(s) (two processes wrote "
            "it at once with an older mindprobe); the first record of each item is used"
        )
    return run


def judgement_store(run_dir: Path, label: str) -> RunStore:
    """The records file of one judge of a run: `judgements/<label>.jsonl` (+ its manifest)."""
    return RunStore(run_dir, f"{JUDGEMENTS_DIR}/{label}.jsonl", f"{JUDGEMENTS_DIR}/{label}.json",
                    identity_fields=("identity",),
                    conflict_hint="pass --judge-label NAME to keep both judges")


def read_judgements(run_dir: Path) -> dict[str, tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Every judge pass of a run: label -> (its manifest, its records, first-wins)."""
    folder = Path(run_dir) / JUDGEMENTS_DIR
    out = {}
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        store = judgement_store(run_dir, path.stem)
        try:
            meta = store.load_manifest()
        except DataError:
            meta = {}
        out[path.stem] = (meta, list(dedupe(store.records())[0].values()))
    return out
