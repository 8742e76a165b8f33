"""What a report shows: the runs, each with the Results its benchmark computes from its records
(exactly what `mindprobe analyse` prints), grouped by benchmark, with consistent model colours.

Nothing here computes a metric: `Benchmark.results_with_judgements` (which is `results` for a
benchmark without judge passes) is called once per run and its Results are rendered as they are.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mindprobe.core.published import PublishedRow
from mindprobe.core.results import Results
from mindprobe.core.store import MANIFEST, Run, iter_runs, load_run
from mindprobe.errors import MindprobeError, UsageError
from mindprobe.report.svg import PALETTE


@dataclass
class RunEntry:
    """One run of the report: its Results (None when they could not be computed)."""

    run: Run
    results: Results | None
    slug: str
    error: str | None = None

    @property
    def benchmark(self) -> str:
        return self.run.benchmark

    @property
    def model(self) -> str:
        return self.run.model_label

    @property
    def n_items(self) -> int | None:
        n = self.run.manifest.get("n_items")
        return int(n) if isinstance(n, int) else None

    @property
    def n_errors(self) -> int:
        return sum(1 for r in self.run.records if "error" in r)

    def partial(self) -> str | None:
        """Why the run is not complete (its state, as `mindprobe runs` says it), or None."""
        state = self.run.state
        return None if state.complete else state.text()

    def failed(self) -> str | None:
        """Why the run has no score (it failed, or nothing was recorded), or None."""
        state = self.run.state
        if state.state == "failed":
            return (f"the run failed: all {state.failed} items ended in errors" if state.done
                    and state.failed == state.done else f"the run failed ({state.text()})")
        if not state.done and state.state != "running":
            return f"no item recorded ({state.text()})"
        return None

    @property
    def setting(self) -> dict[str, str]:
        """What must match for a like-for-like comparison, as the benchmark defines it."""
        from mindprobe.registry import BENCHMARKS, get_benchmark

        if self.benchmark not in BENCHMARKS:
            return {"prompting": self.run.prompting}
        return get_benchmark(self.benchmark).setting(self.run.variant, self.run.plan())

    @property
    def dataset_version(self) -> str | None:
        return dataset_version(self.run.manifest)

    def like(self) -> tuple[str, str, str, str | None]:
        """Runs with the same key are comparable: benchmark, variant, setting, data version."""
        setting = ",".join(f"{k}={v}" for k, v in sorted(self.setting.items()))
        return self.benchmark, self.run.variant, setting, self.dataset_version

    @property
    def title(self) -> str:
        return f"{self.model} · {self.run.variant}" + (
            f" · {self.run.prompting}" if self.run.prompting not in ("basic", "?") else "")


@dataclass
class NotRun:
    """A benchmark a profile planned that did not run: why, what fixes it, and where its
    published rows are read (its data folders) and against what (its planned setting in the
    rows' words, `Benchmark.published_coords`; None: unknown, the first setting's rows)."""

    reason: str
    fix: str = ""
    coords: dict[str, str] | None = None
    data_dirs: list[Path] = field(default_factory=list)

    def text(self) -> str:
        return self.reason + (f" — fix: {self.fix}" if self.fix else "")


@dataclass
class ReportData:
    """Every run of the report, by benchmark (in registry order, unknown ones last)."""

    entries: list[RunEntry]
    colors: dict[str, str] = field(default_factory=dict)
    #: Extra sections of Results, e.g. a paper's tables (name -> Results).
    extra: dict[str, Results] = field(default_factory=dict)
    title: str = "mindprobe report"
    #: Run directories that could not be read, with the reason.
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    #: Published results (papers, upstream files) by benchmark: shown, never paired.
    references: dict[str, list[PublishedRow]] = field(default_factory=dict)
    #: Why a benchmark of the report shows no published rows (none upstream, or not fetched).
    no_published: dict[str, str] = field(default_factory=dict)
    #: Benchmarks a profile planned that did not run: listed, never left out.
    not_run: dict[str, NotRun] = field(default_factory=dict)

    def benchmarks(self) -> list[str]:
        from mindprobe.registry import BENCHMARKS

        seen = list(dict.fromkeys([*(e.benchmark for e in self.entries), *self.not_run]))
        known = [b for b in BENCHMARKS if b in seen]
        return known + [b for b in seen if b not in known]

    def of(self, benchmark: str) -> list[RunEntry]:
        return [e for e in self.entries if e.benchmark == benchmark]

    def models(self) -> list[str]:
        return list(dict.fromkeys(e.model for e in self.entries))

    def color(self, model: str) -> str:
        return self.colors.get(model, "#777")


def find_run_dirs(paths: Iterable[str | Path], runs_dir: str | Path | None) -> list[Path]:
    """Run directories named (a folder holding runs counts as all of them), else under
    `runs_dir`; one clear error when there are none."""
    out: list[Path] = []
    paths = [Path(p) for p in paths]
    for p in paths:
        if (p / MANIFEST).is_file():
            out.append(p)
        elif p.is_dir():
            found = list(iter_runs(p))
            if not found:
                raise UsageError(f"{p} holds no runs (no {MANIFEST} below it)")
            out += found
        else:
            raise UsageError(f"{p}: no such run directory")
    if not paths:
        root = Path(runs_dir or "runs")
        out = list(iter_runs(root))
        if not out:
            where = f"under {root}" if root.is_dir() else f"({root} does not exist)"
            raise UsageError(f"no runs found {where}; give run directories or --runs-dir DIR")
    seen: set[Path] = set()
    unique = []
    for p in out:
        key = p.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique


def results_of(run: Run, data_dir: str | Path | None = None) -> Results:
    """The run's Results, as `mindprobe analyse BENCH --run DIR` computes them."""
    return run.results(data_dir=data_dir)


def combined_of(benchmark: str, by_variant: dict[str, Results]) -> Results | None:
    """The benchmark's own view over several variants (e.g. its variants side by side)."""
    from mindprobe.registry import get_benchmark

    try:
        return get_benchmark(benchmark).combine(by_variant)
    except MindprobeError:
        return None


def across_runs_of(benchmark: str, runs: list[Run]) -> Results | None:
    """The benchmark's own view across its runs (e.g. conditions side by side)."""
    from mindprobe.registry import get_benchmark

    try:
        return get_benchmark(benchmark).compare_runs(runs)
    except MindprobeError:
        return None


def _slug(text: str, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:60] or "run"
    slug, i = base, 2
    while slug in taken:
        slug, i = f"{base}-{i}", i + 1
    taken.add(slug)
    return slug


def dataset_version(manifest: dict[str, Any]) -> str | None:
    """The data's version as the manifest records it (a declared version, else the file's
    sha256, else the generator's seed)."""
    data = manifest.get("data") or {}
    if not isinstance(data, dict):
        return None
    for key in ("dataset_version", "version", "sha256", "git_blob"):
        if data.get(key):
            return str(data[key])
    if data.get("generator") is not None:
        return f"generated seed {data.get('seed')}"
    return None


def collect(run_dirs: Iterable[Path], warn: Callable[[str], None] = lambda m: None,
            extra: dict[str, Results] | None = None, title: str | None = None,
            reference_dirs: Iterable[Path] = (), data_dir: str | Path | None = None,
            not_run: dict[str, NotRun] | None = None) -> ReportData:
    """Load every run and compute its Results; a run that cannot be read or analysed stays in
    the report with the reason (and the warning goes to `warn`). Runs read their data from
    the folder they recorded, or from `data_dir` (a benchmark folder or the data root)."""
    from mindprobe.registry import BENCHMARKS

    entries: list[RunEntry] = []
    unreadable: list[tuple[str, str]] = []
    taken: set[str] = set()
    for d in run_dirs:
        try:
            run = load_run(d)
        except MindprobeError as exc:
            warn(f"skipping {d}: {exc}")
            unreadable.append((str(d), str(exc)))
            continue
        for w in run.warnings:
            warn(w)
        slug = _slug(f"{run.benchmark}-{run.variant}-{run.prompting}-{run.model_label}", taken)
        if run.benchmark not in BENCHMARKS:
            msg = f"unknown benchmark {run.benchmark!r} (this mindprobe knows {', '.join(BENCHMARKS)})"
            warn(f"{d}: {msg}")
            entries.append(RunEntry(run, None, slug, msg))
            continue
        try:
            res = results_of(run, data_dir)
        except MindprobeError as exc:
            warn(f"{d}: cannot analyse: {exc}")
            entries.append(RunEntry(run, None, slug, str(exc)))
            continue
        except Exception as exc:  # a benchmark bug must not cost the whole report
            msg = f"internal error while analysing: {type(exc).__name__}: {exc}"
            warn(f"{d}: {msg}")
            entries.append(RunEntry(run, None, slug, msg))
            continue
        entries.append(RunEntry(run, res, slug))
    extra = dict(extra or {})
    no_published: dict[str, str] = {}
    references = find_references(entries, list(reference_dirs), extra, warn, no_published,
                                 data_dir)
    not_run = dict(not_run or {})
    _not_run_references(not_run, references, no_published, warn)
    if not entries and not extra and not references and not not_run:
        raise UsageError("none of the given runs could be loaded"
                         + "".join(f"; {d}: {why}" for d, why in unreadable[:3]))
    order = {b: i for i, b in enumerate(BENCHMARKS)}
    entries = sorted(entries, key=lambda e: (order.get(e.benchmark, len(order)), e.benchmark,
                                             e.run.variant, e.run.prompting, e.model == "random",
                                             e.model))
    models = list(dict.fromkeys(e.model for e in entries))
    models += [row_name(r) for refs in references.values() for r in refs if r.headline]
    # the random baseline keeps a neutral grey, so real models get the strong colours
    colors, i = {}, 0
    for m in models:
        if m == "random":
            colors[m] = "#9a9a9a"
        else:
            colors[m] = PALETTE[i % len(PALETTE)]
            i += 1
    return ReportData(entries, colors, extra, title or "mindprobe report", unreadable,
                      references, no_published, not_run)


def _not_run_references(not_run: dict[str, NotRun], references: dict[str, list[PublishedRow]],
                        no_published: dict[str, str], warn: Callable[[str], None]) -> None:
    """The published rows of each benchmark that did not run, from its data folders: shown
    whether it ran or not."""
    from mindprobe.registry import BENCHMARKS, get_benchmark

    for name, nr in not_run.items():
        if name in references or name not in BENCHMARKS:
            continue
        bench = get_benchmark(name)
        try:
            rows = bench.published(list(nr.data_dirs) or [None], warn)
        except MindprobeError as exc:
            no_published[name] = f"published results not read: {exc}"
            continue
        if rows:
            references[name] = rows
        elif bench.published_note:
            no_published[name] = bench.published_note


def row_name(row: PublishedRow) -> str:
    """A published row's line in the profile: one per paper's system (two papers' "GPT4" are
    not one model)."""
    return f"{row.system} (published, {row.benchmark})"


def _data_dirs(entries: list[RunEntry], benchmark: str,
               data_dir: str | Path | None = None) -> list[Path]:
    """The given --data-dir (a benchmark folder or the root), where a benchmark's runs read
    their data (the folder each recorded, the folders of their data files) and the data
    cache: published results shipped with the data are found there."""
    from mindprobe.core.data import benchmark_folder, data_dir_for

    given = benchmark_folder(benchmark, data_dir)
    out = [*([given] if given is not None else []), data_dir_for(benchmark, None)]
    for e in entries:
        recorded = e.run.manifest.get("data_dir")  # the folder the run read (its own rule)
        if isinstance(recorded, str):
            out.append(Path(recorded))
        data = e.run.manifest.get("data") or {}
        path = data.get("path") if isinstance(data, dict) else None
        if isinstance(path, str):
            out.append(Path(path).parent)
    return list(dict.fromkeys(out))


def find_references(entries: list[RunEntry], reference_dirs: list[Path],
                    extra: dict[str, Results], warn: Callable[[str], None],
                    missing: dict[str, str] | None = None,
                    data_dir: str | Path | None = None) -> dict[str, list[PublishedRow]]:
    """Every benchmark's published rows: read from its pinned files in `reference_dirs`, the
    data folders of its runs and the data cache (full tables of `reference_dirs` go to
    `extra`). `missing` gets why a benchmark of the runs shows none."""
    from mindprobe.registry import BENCHMARKS, get_benchmark

    missing = {} if missing is None else missing
    seen = list(dict.fromkeys(e.benchmark for e in entries if e.benchmark in BENCHMARKS))
    names = seen if not reference_dirs else list(BENCHMARKS)
    out: dict[str, list[PublishedRow]] = {}
    for name in names:
        dirs = [*reference_dirs, *(_data_dirs([e for e in entries if e.benchmark == name], name,
                                              data_dir) if name in seen else [])]
        bench = get_benchmark(name)
        try:
            rows = bench.published(dirs, warn)
            if reference_dirs:
                extra.update(bench.published_tables(list(reference_dirs), warn))
        except MindprobeError as exc:
            if name in seen:
                warn(f"{name}: published results not read: {exc}")
                missing[name] = (f"published results not read (their pinned upstream files "
                                 f"are missing or damaged): `mindprobe data fetch {name}` "
                                 "fetches them, or --data-dir DIR names a folder holding them")
            continue
        if rows:
            out[name] = rows
        elif name in seen and bench.published_note:
            missing[name] = bench.published_note
    return out


def headline_json(res: Results | None) -> dict[str, Any] | None:
    return res.headline_dict() if res is not None else None
