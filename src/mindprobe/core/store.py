"""A run on disk: `manifest.json` plus append-only `records.jsonl`, one line per finished item.

Records go out as whole lines in a single `write(2)` on an O_APPEND descriptor (records that
finish together share one), so a kill -9 can tear at most the last line; reopening drops that
torn tail, and a write the OS takes only part of before failing is cut back. The records file
is the truth: metrics are always recomputed from it, so a resumed run ends with exactly the
numbers of an uninterrupted one.

The writer (`RunStore`) lives in `core.run_store`; here is the run as analysis reads it
(`Run`, `load_run`, judges' verdicts), and the names every caller imports from one place.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mindprobe.core.records import dedupe, encode_record, read_records, scan_records
from mindprobe.core.requests import TEXTS, read_texts
from mindprobe.core.run_lock import RunLock, now_iso
from mindprobe.core.run_state import RunState, derive
from mindprobe.core.run_store import (
    IDENTITY_FIELDS,
    JUDGEMENTS_DIR,
    KEPT_FIELDS,
    MANIFEST,
    RECORDS,
    RunStore,
    record_ranges,
    write_json_atomic,
)
from mindprobe.errors import DataError, UsageError
from mindprobe.version import __version__

if TYPE_CHECKING:
    from mindprobe.core.plan import RunPlan
    from mindprobe.core.results import Results

#: What other modules import from here: the writer (`core.run_store`) and the reading side.
__all__ = [
    "IDENTITY_FIELDS", "JUDGEMENTS_DIR", "KEPT_FIELDS", "MANIFEST", "RECORDS", "Run", "RunStore",
    "base_manifest", "encode_record", "iter_runs", "judgement_store", "load_run", "now_iso",
    "read_judgements", "read_records", "record_ranges", "settle_interrupted", "write_json_atomic",
]


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
        from mindprobe.core.options import NoOptions, rebuild_options
        from mindprobe.core.plan import RunPlan
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
