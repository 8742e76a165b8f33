"""A run's lifecycle: plan the items, open (or resume) the run directory, start the models and
resources, check capabilities once the model has started, execute, close, summarise.

`mindprobe run`, `mindprobe sort sweep` and `mindprobe.evaluate()` all call `run_task`; the
CLI only turns flags into `RunSettings` and prints what comes back.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mindprobe.core.benchmark import Benchmark, prompt_file_for, with_prompt_file
from mindprobe.core.cache import ResponseCache
from mindprobe.core.data import benchmark_folder
from mindprobe.core.fit import score_fitting
from mindprobe.core.loop import run_blocking
from mindprobe.core.options import build_options, options_dict
from mindprobe.core.paths import folder_name, is_disk_full, response_cache_path
from mindprobe.core.plan import ModelFacts, PlanContext, RunPlan
from mindprobe.core.process import gc_paused
from mindprobe.core.results import Results, failed_results
from mindprobe.core.run_state import derive, document, label_subset
from mindprobe.core.runner import PassSettings, execute, usage_summary
from mindprobe.core.store import RunStore, base_manifest
from mindprobe.engine.settings import Reporter, RunSettings
from mindprobe.errors import Interrupted, ModelError, UsageError
from mindprobe.models import Model, parse_model_spec
from mindprobe.registry import get_benchmark, info, resolve_variants, split_bench_spec


def run_dir_for(runs_dir: Path, bench: str, variant: str, prompting: str, label: str,
                name: str | None = None) -> Path:
    """runs/<benchmark>/<variant>/<prompting>___<model>[__<name>] (the WorldSense convention)."""
    tail = folder_name(f"{prompting}___{label}") + (f"__{name}" if name else "")
    return Path(runs_dir) / bench / variant / tail  # name: a path_component


@dataclass
class Task:
    """A benchmark with its typed options and the variants one call runs."""

    bench: Benchmark
    opts: Any
    variants: list[str]

    @property
    def name(self) -> str:
        return self.bench.name


@dataclass
class Outcome:
    """What a run call produced: exit code (1 when items errored), per-variant results and
    JSON documents (the CLI's), and the combined view of several variants if the benchmark
    has one."""

    code: int = 0
    results: dict[str, Results] = field(default_factory=dict)
    docs: dict[str, Any] = field(default_factory=dict)
    combined: Results | None = None

    def document(self, benchmark: str) -> dict[str, Any]:
        """The one JSON document `mindprobe run --json` prints."""
        doc = envelope(benchmark, self.docs)
        if self.combined is not None:
            doc["tables"] = self.combined.to_json()["tables"]
        return doc


def envelope(bench: str, docs: dict[str, Any]) -> dict[str, Any]:
    """One variant: its document; several: {benchmark, variants: {name: document}}."""
    if len(docs) == 1:
        return next(iter(docs.values()))
    warnings = [w for d in docs.values() for w in d.get("warnings", [])]
    return {"benchmark": bench, "variants": docs, "warnings": warnings}


def prepare(task: str, options: dict[str, Any], settings: RunSettings) -> Task:
    """Resolve `name[:variant]`, build the typed options (validated as flags are), check the
    settings and roles: every user mistake surfaces here, before data is loaded."""
    name, variant = split_bench_spec(task)
    variants = resolve_variants(info(name), variant)
    settings.check()
    bench = get_benchmark(name)
    opts = build_options(bench.Options, options, benchmark=name)
    unknown = sorted(set(settings.roles) - set(bench.roles))
    if unknown:
        raise UsageError(f"{name} has no role {unknown[0]!r}; "
                         + (f"its roles: {', '.join(bench.roles)}" if bench.roles
                            else "it uses no other model"))
    return Task(bench, opts, variants)


def build_model(spec: str, settings: RunSettings, *, scaled: bool = True) -> Model:
    """The backend of `spec` with the run's timeouts, reasoning and (for the model under test)
    its endpoints or replicas."""
    extra: dict[str, Any] = {}
    if scaled:
        extra = {"endpoints_file": settings.endpoints, "replicas": settings.replicas,
                 "ray_address": settings.ray}
        extra.update(threads=settings.threads, batch=settings.batch)
    model = parse_model_spec(spec, timeout=settings.timeout, max_attempts=settings.max_attempts,
                             reasoning_effort=settings.reasoning_effort,
                             reasoning=settings.reasoning, **extra)
    if scaled and settings.context_window is not None:
        model.set_context_window(settings.context_window, "--context-window", fixed=True)
    return model


def plan_all(task: Task, settings: RunSettings, facts: ModelFacts,
             reporter: Reporter) -> list[tuple[str, RunPlan]]:
    """Each variant's plan: its items (cut to --limit), config and data provenance."""
    plans: list[tuple[str, RunPlan]] = []
    prompt_file = prompt_file_for(task.bench, settings.prompt_file)
    data_dir = benchmark_folder(task.name, settings.data_dir, task.bench.data_files)
    for v in task.variants:
        reporter.loading(f"{task.name}:{v}")
        ctx = PlanContext(variant=v, seed=settings.seed, data_dir=data_dir, limit=settings.limit,
                          max_tokens=settings.max_tokens, model=facts, roles=settings.roles,
                          warn=reporter.warn, info=reporter.note, prompt_file=prompt_file,
                          dry_run=settings.dry_run)
        plan = with_prompt_file(task.bench, task.bench.plan(ctx, task.opts), prompt_file)
        plan.options = task.opts
        if settings.limit is not None and not plan.limit_applied:
            plan.items = plan.items[: settings.limit]
        plan.model_label = facts.label
        plan.model_facts = facts
        plan.data_dir = data_dir
        plans.append((v, plan))
    return plans


def run_task(task: Task, settings: RunSettings, reporter: Reporter,
             model: Model | None = None) -> Outcome:
    """Run (or resume) every variant of `task`; an interrupt leaves each run resumable."""
    model = model or build_model(settings.model, settings)
    facts = ModelFacts.of(model)
    # The plans' data (20,000 WorldSense trials, say) lives as long as the run: it is built
    # with the cyclic GC paused, then frozen out of its sight, so neither the catch-up
    # collection after the load nor the run's many small collections walk it. (Not frozen when
    # the caller froze objects of its own: unfreezing would undo theirs.)
    freeze, frozen = gc.get_freeze_count() == 0, False
    plans: list[tuple[str, RunPlan]] = []
    try:
        with gc_paused():
            plans = plan_all(task, settings, facts, reporter)
            if freeze:
                gc.freeze()
                frozen = True
        models: dict[str, Model] = {"model": model}
        for role, spec in {r: s for _, p in plans for r, s in p.roles.items()}.items():
            models[role] = build_model(spec, settings, scaled=False)
        outcome = Outcome()
        run_blocking(_run_all(task, settings, plans, models, reporter, outcome))
    except KeyboardInterrupt:
        dirs = [run_dir_of(task, settings, v, p, model) for v, p in plans]
        reporter.interrupted(dirs, len(plans) < len(task.variants),
                             settings.command or settings.equivalent_command(
                                 task.name, options_dict(task.opts)))
        raise Interrupted from None
    finally:
        if frozen:
            gc.unfreeze()  # collectable again once the run is over (the Python API runs many)
    if len(plans) > 1:
        outcome.combined = task.bench.combine(outcome.results)
    return outcome


@dataclass
class Shared:
    """What several tasks running at once share (`mindprobe profile`): the model under test,
    started and closed by the caller, one response cache and one progress display."""

    model: Model
    cache: ResponseCache | None = None
    progress: Any = None


async def run_planned(task: Task, settings: RunSettings, plans: list[tuple[str, RunPlan]],
                      reporter: Reporter, shared: Shared) -> Outcome:
    """Run (or resume) `task`'s planned variants inside a running event loop, beside other
    tasks sharing `shared`; its own role models (a judge) are started and closed here."""
    models: dict[str, Model] = {"model": shared.model}
    for role, spec in {r: s for _, p in plans for r, s in p.roles.items()}.items():
        models[role] = build_model(spec, settings, scaled=False)
    outcome = Outcome()
    await _run_all(task, settings, plans, models, reporter, outcome, shared)
    if len(plans) > 1:
        outcome.combined = task.bench.combine(outcome.results)
    return outcome


def check_capabilities(model: Model, plans: list[tuple[str, RunPlan]]) -> None:
    """Once, after the model has started (a server's real abilities are only known then)."""
    for _, plan in plans:
        for cap, why in plan.requires.items():
            if not model.can(cap):
                raise ModelError(f"{why}, which {model.spec} does not offer "
                                 f"(it offers: {', '.join(sorted(model.capabilities)) or 'none'})")


def open_cache(settings_cache: bool, cache_file: str | Path | None, models: list[Model],
               warn: Callable[[str], None] | None = None) -> ResponseCache | None:
    """The response cache, when wanted and some model's replies may be cached; `warn` hears
    about damage it found and set aside (the reporter's warnings)."""
    if not settings_cache or not any(m.cacheable for m in models):
        return None
    path = Path(cache_file) if cache_file else response_cache_path()
    return ResponseCache(path, warn=warn)


async def _run_all(task: Task, settings: RunSettings, plans: list[tuple[str, RunPlan]],
                   models: dict[str, Model], reporter: Reporter, outcome: Outcome,
                   shared: Shared | None = None) -> None:
    model = models["model"]
    concurrency = settings.concurrency or model.default_concurrency
    # With `shared`, the model under test and the cache are the caller's to start and close.
    own = {r: m for r, m in models.items() if shared is None or m is not shared.model}
    for m in own.values():
        m.configure(concurrency)
    # A re-run with nothing left to ask loads no model (a server's client is still started:
    # one request, and what the server serves is part of the run's identity); its results
    # are read back from the records.
    idle = not any(RunStore(run_dir_of(task, settings, v, p, model)).left(
        [it.id for it in p.items], settings.retry_errors) for v, p in plans)
    cache = None if idle else shared.cache if shared is not None else open_cache(
        settings.cache, settings.cache_file, list(models.values()), reporter.warn)
    resources = {} if idle else {k: r for _, p in plans for k, r in p.resources.items()}
    started: list[Model] = []
    try:
        for r in resources.values():  # first: a cheap check that fails before a model loads
            await r.start()
        if model.spec.startswith("local") and "model" in own and not idle:
            # the protocol the benchmarks chose and why (by its capabilities, not its spec)
            proto = model.protocol()
            reporter.note(f"starting the embedded llama.cpp server… ({proto['why']}: "
                          f"the {proto['kind']} model's protocol)")
        for m in own.values():
            if not (idle and m.heavy_start):
                started.append(m)
                await m.start()
        for m in models.values():  # what starting it taught (a capability its server lacks)
            for note in m.take_notes():
                if not idle:
                    reporter.note(note)
        if not idle:
            check_capabilities(model, plans)
            for _, plan in plans:
                await task.bench.prepare(plan, model)
        for variant, plan in plans:
            code, res, doc = await _run_one(task, settings, variant, plan, models,
                                            concurrency, cache, resources, reporter,
                                            shared.progress if shared is not None else None,
                                            idle=idle)
            outcome.results[variant], outcome.docs[variant] = res, doc
            outcome.code = max(outcome.code, code)
    finally:
        for r in resources.values():
            await r.close()
        for m in started:
            await m.close()
        if cache is not None and shared is None:
            cache.close()


def _close_failed(store: RunStore, new_dir: bool, run_dir: Path, settings: RunSettings,
                  reporter: Reporter, command: str) -> None:
    """A run that stopped on an error: marked failed, or removed when it holds nothing."""
    store.close("failed")
    if new_dir and not store.records():  # nothing to keep: leave no empty failed run
        shutil.rmtree(run_dir, ignore_errors=True)
        _prune_empty(run_dir.parent, Path(settings.runs_dir))
    else:
        reporter.kept(run_dir, command)


def run_dir_of(task: Task, settings: RunSettings, variant: str, plan: RunPlan,
               model: Model) -> Path:
    """Where a variant's run lies (its plan may relabel the variant, e.g. a --data-file)."""
    return run_dir_for(Path(settings.runs_dir), task.name, plan.variant_label or variant,
                       plan.prompting, model.label, settings.name)


def _prune_empty(folder: Path, root: Path) -> None:
    """Remove `folder` and its parents up to (not including) `root` while they are empty."""
    with contextlib.suppress(OSError):
        while folder != root and root in folder.parents and not any(folder.iterdir()):
            folder.rmdir()
            folder = folder.parent


async def _run_one(task: Task, settings: RunSettings, variant: str, plan: RunPlan,
                   models: dict[str, Model], concurrency: int, cache: ResponseCache | None,
                   resources: dict[str, Any], reporter: Reporter,
                   progress: Any = None, idle: bool = False) -> tuple[int, Results, dict[str, Any]]:
    """`idle`: nothing is left to ask, and no model was loaded (`_run_all`)."""
    bench, model = task.bench, models["model"]
    run_dir = run_dir_of(task, settings, variant, plan, model)
    variant = plan.variant_label or variant
    new_dir = not (run_dir / "manifest.json").exists()
    seed = settings.seed if settings.seed is not None else plan.config.get("seed", 0)
    command = settings.command or settings.equivalent_command(
        f"{bench.name}:{variant}", options_dict(task.opts))
    manifest = base_manifest(
        benchmark=bench.name,
        variant=variant,
        prompting=plan.prompting,
        model={role: m.spec for role, m in models.items()},
        model_label=model.label,
        model_identity={role: m.identity() for role, m in models.items()},
        models={role: m.describe() for role, m in models.items()},
        options=options_dict(plan.options),
        config={"seed": seed, **plan.config},
        data=plan.provenance,
        data_dir=str(plan.data_dir.resolve()) if plan.data_dir else None,
        n_items=len(plan.items),
        concurrency=concurrency,
        deterministic=model.deterministic(concurrency),
        command=command,
    )
    store = RunStore(run_dir)
    if idle:  # what only a started model adds to the manifest: as recorded
        manifest = store.settled(manifest, plan.sizes)
    done = store.open(manifest, retry_errors=settings.retry_errors,
                      planned={it.id: it.key for it in plan.items}, sizes=plan.sizes)
    if store.duplicates_dropped:
        reporter.repaired(store.records_path, store.duplicates_dropped)
    pass_settings = PassSettings(
        concurrency=concurrency, seed=seed, cache=cache, config=plan.config,
        options=plan.options, prompting=plan.prompting, resources=resources,
        item_time_limit=plan.item_time_limit,
        debug=settings.debug, progress=progress,
    )
    t0 = time.perf_counter()
    try:
        result = await execute(plan.items, bench.run_item, models, store, done, pass_settings,
                               console=reporter.console,
                               description=f"{bench.name}:{variant}")
    except asyncio.CancelledError:
        store.close("interrupted")  # the call says so, with the resume line (run_task)
        raise
    except OSError as exc:
        if not is_disk_full(exc):
            _close_failed(store, new_dir, run_dir, settings, reporter, command)
            raise
        with contextlib.suppress(OSError):  # where even that finds no room, records still are
            store.close("interrupted")
        raise store.disk_full(command) from None
    except BaseException:
        _close_failed(store, new_dir, run_dir, settings, reporter, command)
        raise
    records = result.records
    status = "finished" if result.errors == 0 else "finished_with_errors"
    state = derive({"status": status, "n_items": len(plan.items)}, records)
    try:
        res = label_subset(score_fitting(bench.name, records, lambda rs: failed_results(
            bench.name, rs) or bench.results(rs, plan)), state)
    except BaseException:
        store.close(status)  # every item is recorded; scoring alone failed (analyse re-scores)
        raise
    # what the replies held that the run should hear once (usage ignored, replies of no form)
    res.warnings.extend(w for m in models.values() for w in m.take_warnings())
    doc = {"run": str(run_dir), "variant": variant, **res.to_json(), **document(state),
           "usage": usage_summary(records)}
    for role in models:
        if role != "model":
            doc[f"{role}_usage"] = usage_summary(records, role)
    try:
        store.close(status, summary={"headline": res.headline_dict(), "usage": doc["usage"],
                                     "invalid": res.invalid_dict(), "failed": res.failed_dict(),
                                     "items_done": len(records), "state": state.as_dict()})
    except OSError as exc:
        if is_disk_full(exc):
            raise store.disk_full(command) from None
        raise
    endpoints = None if idle else model.endpoint_stats()
    if endpoints:
        doc["endpoints"] = endpoints
    reporter.finished(run_dir, result, records, time.perf_counter() - t0, endpoints,
                      doc["usage"])
    res.run_dir = run_dir
    res.document = doc
    return (1 if result.errors else 0), res, doc
