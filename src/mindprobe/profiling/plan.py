"""The plan of a profile: per benchmark its setting, items, requests, estimated tokens (and
cost), the 95% half-width stated in advance, and whether it is done, resumes, lacks data or
cannot run for this model (with the reason and what enables it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property, partial
from pathlib import Path
from typing import Any

from mindprobe.core.benchmark import ProfileSettings
from mindprobe.core.data import data_dir_for, fetchable
from mindprobe.core.model import FREE_TEXT
from mindprobe.core.options import typed_values
from mindprobe.core.plan import ModelFacts, RunPlan
from mindprobe.core.run_state import RunState
from mindprobe.core.stats import Precision
from mindprobe.core.store import RunStore
from mindprobe.engine.run import Task, plan_all, prepare, run_dir_for
from mindprobe.engine.settings import Reporter, RunSettings
from mindprobe.errors import DataError, UsageError
from mindprobe.profiling.parallel import planned_at_once
from mindprobe.registry import BENCHMARKS, get_benchmark

READY, RESUME, DONE, MISSING, CANNOT = "runs", "resumes", "done", "missing data", "cannot run"


@dataclass
class Entry:
    """One benchmark of the profile."""

    name: str
    settings: ProfileSettings
    status: str = READY
    reason: str = ""
    #: The flag that enables a benchmark that cannot run, or that makes it richer.
    enable: str = ""
    task: Task | None = None
    plans: list[tuple[str, RunPlan]] = field(default_factory=list)
    run_dirs: list[Path] = field(default_factory=list)
    items: int = 0
    done: int = 0
    estimate: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: The run settings of this benchmark (its limit, data folder, judge).
    run_settings: RunSettings | None = None
    #: What each of its runs came to once the profile ran (`core.run_state`), by folder.
    states: dict[Path, RunState] = field(default_factory=dict)

    @property
    def outcome(self) -> str:
        """What profile.json says: its runs' state (finished only when every run is), or the
        plan's status for a benchmark that did not run."""
        if not self.states:
            return self.status
        order = ("failed", "interrupted", "running", "partial", "finished")
        return min((s.state for s in self.states.values()), key=order.index)

    @property
    def setting(self) -> str:
        opts = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in self.settings.options.items())
        limit = f" --limit {self.settings.limit}" if self.settings.limit else ""
        return f"{self.name}:{self.settings.variant}" + (f" {opts}" if opts else "") + limit

    @property
    def runnable(self) -> bool:
        return self.status in (READY, RESUME)

    @cached_property
    def precisions(self) -> dict[str, Precision]:
        """The half-width the benchmark's own interval method gives for each run's planned
        items (`Benchmark.precision`), by variant."""
        if self.task is None:
            return {}
        return {v: self.task.bench.precision(plan) for v, plan in self.plans if plan.items}

    @property
    def precision(self) -> Precision | None:
        """The plan's statement: the widest of its runs' (a group's variants), None without
        items."""
        known = [p for p in self.precisions.values() if p.half_width is not None]
        return max(known, key=lambda p: p.half_width or 0.0) if known and self.items else None

    @property
    def half_width(self) -> float | None:
        """The stated 95% half-width, in `unit`."""
        return self.precision.half_width if self.precision is not None else None

    @property
    def unit(self) -> str:
        return self.precision.unit if self.precision is not None else " points"


def profiled(size: str) -> list[tuple[str, ProfileSettings]]:
    """Every benchmark with a profile setting at `size`, in the registry's order."""
    out = []
    for name in BENCHMARKS:
        ps = get_benchmark(name).profile_settings(size)
        if ps is not None:
            out.append((name, ps))
    return out


def _options(name: str, ps: ProfileSettings, extra: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {**ps.options, **extra.get(name, {})}


def plan_profile(size: str, settings: RunSettings, facts: ModelFacts, reporter: Reporter,
                 options: dict[str, dict[str, Any]], data_root: Path | None,
                 judge: str | None, runs_dir: Path) -> list[Entry]:
    """Plan every benchmark; one that lacks data or cannot run for this model is an entry
    saying so, never an error (the profile runs the rest, or --strict refuses)."""
    entries = []
    unknown = sorted(set(options) - {n for n, _ in profiled(size)})
    if unknown:
        raise UsageError(f"-O {unknown[0]}.…: {unknown[0]} is not part of the profile; its "
                         f"benchmarks: {', '.join(n for n, _ in profiled(size))}")
    for name, given in options.items():  # the user's own -O: a typo is an error, not a skip
        try:
            typed_values(get_benchmark(name).Options, given, benchmark=name)
        except UsageError as exc:
            raise UsageError(f"-O {name}.…: {exc}") from None
    jobs = []
    for name, ps in profiled(size):
        bench = get_benchmark(name)
        roles = {"judge": judge} if judge and "judge" in bench.roles else {}
        # an item that ended in an error is unfinished (the plan counts it so): a re-run
        # asks it again, as `run --retry-errors` does
        sub = RunSettings(**{**settings.__dict__, "roles": roles, "limit": ps.limit,
                             "data_dir": data_root / name if data_root else None,
                             "retry_errors": True})
        jobs.append((name, ps, bench, sub))
    # all at once, each in a thread; heard and handled below in the profile's order
    planned = planned_at_once([partial(_plan_one, name, ps, sub, facts, options=options)
                               for name, ps, _, sub in jobs], reporter)
    for (name, ps, bench, sub), outcome in zip(jobs, planned, strict=True):
        entry = Entry(name, ps)
        entries.append(entry)
        try:
            entry.task, entry.plans = outcome()
            sub.runs_dir = runs_dir  # checked as the user's folder; the runs go in the profile
        except DataError as exc:
            entry.status = MISSING
            entry.reason, entry.enable = missing_data(name, bench, ps, exc, sub.data_dir)
            continue
        except UsageError as exc:
            entry.status, entry.reason = CANNOT, str(exc)
            entry.enable = f"-O {name}.OPTION=VALUE (the option the reason names)"
            continue
        lacks = {cap: why for _, p in entry.plans for cap, why in p.requires.items()
                 if cap not in facts.capabilities}
        if lacks:  # said in the plan, before anything starts; the rest of the profile runs
            entry.status = CANNOT
            entry.reason = f"{'; '.join(sorted(set(lacks.values())))}, which {facts.spec} " \
                "does not offer"
            entry.enable = ("a model that answers in free text (--model)" if FREE_TEXT in lacks
                            else f"-O {name}.OPTION=VALUE (the option the reason names)")
            continue
        entry.run_settings = sub
        entry.notes += [ps.note] if ps.note else []
        if "judge" in bench.roles and not judge:
            entry.notes.append(f"{name} runs without its judge (--judge SPEC grades it)")
        _progress(entry, sub, facts.label)
        if ps.items and entry.items < ps.items:
            entry.notes.append(f"the data holds {entry.items:,} of the {ps.items:,} items "
                               f"--size {size} runs: its stated half-width is for "
                               f"{entry.items:,} (give the full data file for the rest)")
        entry.estimate = estimate_of(entry)
    return entries


def _plan_one(name: str, ps: ProfileSettings, settings: RunSettings, facts: ModelFacts,
              reporter: Reporter, options: dict[str, dict[str, Any]]
              ) -> tuple[Task, list[tuple[str, RunPlan]]]:
    task = prepare(f"{name}:{ps.variant}", _options(name, ps, options), settings)
    return task, plan_all(task, settings, facts, reporter)


def missing_data(name: str, bench: Any, ps: ProfileSettings, exc: DataError,
                 folder: Path | None) -> tuple[str, str]:
    """(what is missing, the ways out) in one short line each: the file or folder it looked
    in (the error's first clause), then `data fetch` where the benchmark has files to fetch,
    `--data-dir`, and the benchmark's own offline option (`ProfileSettings.offline`)."""
    what = str(exc).split(": ", 1)[0].removeprefix("missing data file ")
    ways = [f"`mindprobe data fetch {name}`"] if fetchable(bench.data_files) else []
    ways.append("--data-dir DIR")
    if ps.offline:
        key, relpath, label = ps.offline
        where = data_dir_for(name, folder) / relpath
        path = where if where.is_file() else f"PATH ({label}: shared/data/{name}/{relpath})"
        ways.append(f"-O {name}.{key}={path}" + (f" ({label})" if where.is_file() else ""))
    return what, ", ".join(ways[:-1]) + (" or " if len(ways) > 1 else "") + ways[-1]


def _progress(entry: Entry, settings: RunSettings, label: str) -> None:
    """Items planned and already recorded (a finished benchmark sends nothing)."""
    assert entry.task is not None
    for variant, plan in entry.plans:
        run_dir = run_dir_for(Path(settings.runs_dir), entry.name,
                              plan.variant_label or variant, plan.prompting, label)
        entry.run_dirs.append(run_dir)
        entry.items += len(plan.items)
        ids = [it.id for it in plan.items]
        entry.done += len(ids) - RunStore(run_dir).left(ids, retry_errors=True)
    if entry.items and entry.done >= entry.items:
        entry.status = DONE
    elif entry.done:
        entry.status = RESUME


def estimate_of(entry: Entry) -> dict[str, Any]:
    """Requests and tokens of the items still to run, from the benchmark's own estimate (with
    the token counter in force, `core.estimate.counting`)."""
    assert entry.task is not None
    total: dict[str, Any] = {}
    for _, plan in entry.plans:
        if not plan.items:
            continue
        try:
            est = entry.task.bench.estimate(plan, entry.task.opts).detail.get("estimate") or {}
        except UsageError:
            est = {}
        for k in ("turns", "requests", "prompt_tokens", "prefill_tokens", "completion_tokens",
                  "expected_completion_tokens", "expected_prompt_tokens",
                  "expected_prefill_tokens", "expected_turns", "expected_requests"):
            if k in est:
                total[k] = total.get(k, 0) + int(est[k])
        for k in ("bound", "expected_assumes", "note"):
            if est.get(k):
                total[k] = est[k]
    left = 1 - entry.done / entry.items if entry.items else 0
    return {k: (round(v * left) if isinstance(v, int) else v) for k, v in total.items()}
