"""`mindprobe run`: plan the items, open (or resume) the run directory, execute, report."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import os
import shlex
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from mindprobe.commands.output import emit_json, print_summary, report_interrupt, tables_console
from mindprobe.core.benchmark import Benchmark, ModelFacts, PlanContext, RunPlan
from mindprobe.core.cache import ResponseCache
from mindprobe.core.loop import run_async
from mindprobe.core.options import build_options, options_dict, parse_assignments
from mindprobe.core.paths import check_parent, path_component, response_cache_path
from mindprobe.core.process import gc_paused
from mindprobe.core.prompt_file import for_benchmark, labelled
from mindprobe.core.results import Results, failed_results, render_results
from mindprobe.core.runner import PassSettings, execute, usage_summary
from mindprobe.core.store import RunStore, base_manifest
from mindprobe.errors import Interrupted, ModelError, UsageError
from mindprobe.models import Model, parse_model_spec
from mindprobe.registry import get_benchmark, info, resolve_variants, split_bench_spec


def run_dir_for(runs_dir: Path, bench: str, variant: str, prompting: str, label: str,
                name: str | None = None) -> Path:
    """runs/<benchmark>/<variant>/<prompting>___<model>[__<name>] (the WorldSense convention)."""
    tail = f"{prompting}___{label}" + (f"__{name}" if name else "")  # name: path_component
    return Path(runs_dir) / bench / variant / tail


def bench_option_values(args: argparse.Namespace) -> dict[str, Any]:
    """Options given as flags (`--shots 3`) and generically (`-O shots=3`); both at once for one
    option is refused rather than silently preferring one."""
    flags = {k[len("bench__"):]: v for k, v in vars(args).items()
             if k.startswith("bench__") and v is not None}
    generic = parse_assignments(getattr(args, "option", None))
    both = sorted(set(flags) & set(generic))
    if both:
        raise UsageError(f"option {both[0]!r} given both as a flag and with -O; give it once")
    return {**generic, **flags}


def parse_roles(args: argparse.Namespace) -> dict[str, str]:
    roles: dict[str, str] = {}
    for pair in getattr(args, "role", None) or []:
        role, sep, spec = pair.partition("=")
        if not sep or not role or not spec:
            raise UsageError(f"--role expects ROLE=SPEC (e.g. judge=openai:gpt-4o), got {pair!r}")
        if role == "model":
            raise UsageError("--role model=... is --model")
        roles[role] = spec
    return roles


def check_positive(args: argparse.Namespace) -> None:
    """Counts and the timeout, as any command that sends requests takes them (NaN refused)."""
    for flag in ("limit", "concurrency", "max_tokens", "max_attempts", "threads", "batch_size"):
        value = getattr(args, flag, None)
        if value is not None and value < 1:
            raise UsageError(f"--{flag.replace('_', '-')} must be a positive number; got {value}")
    timeout = getattr(args, "timeout", None)
    if timeout is not None and not 0 < timeout < float("inf"):
        raise UsageError(f"--timeout must be a positive number of seconds; got {timeout:g}")


def _check_paths(args: argparse.Namespace) -> None:
    """The runs folder and the cache file may be created, not their missing parents."""
    runs = Path(args.runs_dir)
    if runs.exists() and not runs.is_dir():
        raise UsageError(f"--runs-dir {runs} is a file; give a folder")
    check_parent(runs, "--runs-dir")
    cache = getattr(args, "cache", None)
    if cache and not getattr(args, "no_cache", False):
        check_parent(Path(cache), "--cache")


def _prune_empty(folder: Path, root: Path) -> None:
    """Remove `folder` and its parents up to (not including) `root` while they are empty."""
    with contextlib.suppress(OSError):
        while folder != root and root in folder.parents and not any(folder.iterdir()):
            folder.rmdir()
            folder = folder.parent


def cmd_run(args: argparse.Namespace, err: Console) -> int:
    return run_command(args, err)[0]


@contextlib.contextmanager
def reasoning_settings(args: argparse.Namespace) -> Any:
    """`--reasoning-effort` / `--reasoning` for the backends built during this command (they
    read MINDPROBE_REASONING_EFFORT / MINDPROBE_REASONING); restored afterwards, so one
    command's flags never leak into the next in the same process."""
    from mindprobe.models.openai_compat import REASONING_EFFORT_ENV, REASONING_ENV

    saved = {k: os.environ.get(k) for k in (REASONING_EFFORT_ENV, REASONING_ENV)}
    if getattr(args, "reasoning_effort", None):
        os.environ[REASONING_EFFORT_ENV] = args.reasoning_effort
    if getattr(args, "reasoning", False):
        os.environ[REASONING_ENV] = "1"
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_command(args: argparse.Namespace, err: Console) -> tuple[int, dict[str, Any]]:
    """Run (or resume) what `args` describe; (exit code, JSON documents by variant)."""
    with reasoning_settings(args):
        return _run_command(args, err)


def _run_command(args: argparse.Namespace, err: Console) -> tuple[int, dict[str, Any]]:
    name, variant = split_bench_spec(args.benchmark)
    meta = info(name)
    variants = resolve_variants(meta, variant)
    check_positive(args)
    _check_paths(args)
    if getattr(args, "name", None):
        path_component(args.name, "--name")  # before anything is loaded or started
    bench: Benchmark = get_benchmark(name)
    opts = build_options(bench.Options, bench_option_values(args), benchmark=name)
    roles = parse_roles(args)
    unknown = sorted(set(roles) - set(bench.roles))
    if unknown:
        raise UsageError(f"{name} has no role {unknown[0]!r}; "
                         + (f"its roles: {', '.join(bench.roles)}" if bench.roles
                            else "it uses no other model"))
    if getattr(opts, "estimate", False):
        return _estimate(args, bench, opts, name, variants, roles, err), {}
    model = parse_model_spec(args.model, timeout=args.timeout, max_attempts=args.max_attempts,
                             endpoints_file=getattr(args, "endpoints", None),
                             replicas=getattr(args, "replicas", None),
                             ray_address=getattr(args, "ray", None),
                             threads=getattr(args, "threads", None),
                             batch=getattr(args, "batch_size", None))
    facts = ModelFacts(model.spec, model.label, model.capabilities, model.context_window)
    # The plans' data (20,000 WorldSense trials, say) lives as long as the run: it is built
    # with the cyclic GC paused, then frozen out of its sight, so neither the catch-up
    # collection after the load nor the run's many small collections walk it. (Not frozen when
    # the caller froze objects of its own: unfreezing would undo theirs.)
    freeze, frozen = gc.get_freeze_count() == 0, False
    plans: list[tuple[str, RunPlan]] = []
    try:
        with gc_paused():
            plans = _plan_all(args, bench, opts, name, variants, facts, roles, model.label, err)
            if freeze:
                gc.freeze()
                frozen = True
        if getattr(args, "dry_run", False):
            return _dry_run(args, bench, opts, plans, model, err), {}
        models: dict[str, Model] = {"model": model}
        for role, spec in {r: s for _, p in plans for r, s in p.roles.items()}.items():
            models[role] = parse_model_spec(spec, timeout=args.timeout,
                                            max_attempts=args.max_attempts)
        docs: dict[str, Any] = {}
        code = run_async(_run_all(args, bench, opts, plans, models, err, docs))
    except KeyboardInterrupt:
        report_interrupt(err, [run_dir_for(Path(args.runs_dir), bench.name,
                                           p.variant_label or v, p.prompting, model.label,
                                           args.name) for v, p in plans], len(plans) < len(variants))
        raise Interrupted from None
    finally:
        if frozen:
            gc.unfreeze()  # collectable again once the run is over (the Python API runs many)
    return code, docs


def _plan_all(args: argparse.Namespace, bench: Benchmark, opts: Any, name: str,
              variants: list[str], facts: ModelFacts, roles: dict[str, str], label: str,
              err: Console) -> list[tuple[str, RunPlan]]:
    """Each variant's plan: its items (cut to --limit), config and data provenance."""
    def warn(message: str) -> None:
        err.print(f"[yellow]warning[/yellow]: {message}", highlight=False)

    def note(message: str) -> None:
        err.print(message, markup=False, highlight=False)

    plans: list[tuple[str, RunPlan]] = []
    prompt_file = for_benchmark(bench, getattr(args, "prompt_file", None))
    for v in variants:
        if err.is_terminal:
            note(f"{name}:{v}: loading data…")
        ctx = PlanContext(variant=v, seed=args.seed, data_dir=Path(args.data_dir).expanduser()
                          if args.data_dir else None, limit=args.limit,
                          max_tokens=args.max_tokens, model=facts, roles=roles, warn=warn,
                          info=note, prompt_file=prompt_file)
        plan = labelled(bench, bench.plan(ctx, opts), prompt_file)
        if args.limit is not None and not plan.limit_applied:
            plan.items = plan.items[: args.limit]
        plan.model_label = label
        plans.append((v, plan))
    return plans


def _dry_run(args: argparse.Namespace, bench: Benchmark, opts: Any,
             plans: list[tuple[str, RunPlan]], model: Model, err: Console) -> int:
    """How the items would be spread over the endpoints, and the requests (and tokens, where
    the benchmark estimates them) the run would take; nothing is started or sent."""
    from mindprobe.commands.output import print_dry_run
    from mindprobe.models.endpoints import spread

    eps = model.endpoint_stats() or [{"endpoint": model.spec, "concurrency": None}]
    given = [e["concurrency"] for e in eps if e["concurrency"]]
    weights = [float(e["concurrency"] or (sum(given) / len(given) if given else 1.0))
               for e in eps]
    concurrency = args.concurrency or model.default_concurrency
    docs = {}
    for variant, plan in plans:
        n = len(plan.items)
        est: dict[str, Any] = {}
        if n:
            try:
                est = bench.estimate(plan, opts).detail.get("estimate") or {}
            except UsageError:
                est = {}
        requests = int(est.get("requests") or est.get("turns") or n)
        tokens = {k: int(est[k]) for k in ("prompt_tokens", "prefill_tokens", "completion_tokens")
                  if k in est} or None
        rows = []
        for e, k in zip(eps, spread(n, weights), strict=True):
            share = k / n if n else 0.0
            rows.append({"endpoint": e["endpoint"], "concurrency": e["concurrency"], "items": k,
                         "requests": round(requests * share),
                         **{t: round(v * share) for t, v in (tokens or {}).items()}})
        bound = "up to" if est else "at least"  # estimate: every chat lasts; else 1 per item
        print_dry_run(err, f"{bench.name}:{variant}", n, requests, bound, tokens, rows,
                      concurrency)
        docs[variant] = {"variant": variant, "dry_run": True, "items": n, "requests": requests,
                         "requests_bound": bound, "tokens": tokens,
                         "concurrency": concurrency, "endpoints": rows}
    emit_json(args.json and not getattr(args, "embedded", False), _envelope(bench.name, docs))
    return 0


def _estimate(args: argparse.Namespace, bench: Benchmark, opts: Any, name: str,
              variants: list[str], roles: dict[str, str], err: Console) -> int:
    """Tokens (and cost) without building a model: no API key, nothing sent."""
    facts = ModelFacts(args.model, "estimate")
    docs = {}
    prompt_file = for_benchmark(bench, getattr(args, "prompt_file", None))
    for v in variants:
        ctx = PlanContext(variant=v, seed=args.seed, data_dir=Path(args.data_dir).expanduser()
                          if args.data_dir else None, limit=args.limit,
                          max_tokens=args.max_tokens, model=facts, roles=roles,
                          warn=lambda m: err.print(f"[yellow]warning[/yellow]: {m}"),
                          info=lambda m: None, prompt_file=prompt_file)
        plan = labelled(bench, bench.plan(ctx, opts), prompt_file)
        res = bench.estimate(plan, opts)
        render_results(res, err)
        docs[v] = {"variant": v, **res.to_json()}
    emit_json(args.json, _envelope(name, docs))
    return 0


async def _run_all(args: argparse.Namespace, bench: Benchmark, opts: Any,
                   plans: list[tuple[str, RunPlan]], models: dict[str, Model],
                   err: Console, docs: dict[str, Any]) -> int:
    model = models["model"]
    concurrency = args.concurrency or model.default_concurrency
    for m in models.values():
        m.configure(concurrency)
    cache = None
    if not args.no_cache and any(m.cacheable for m in models.values()):
        cache = ResponseCache(Path(args.cache) if args.cache else response_cache_path())
    resources = {k: r for _, p in plans for k, r in p.resources.items()}
    results: dict[str, Results] = {}
    worst = 0
    try:
        for r in resources.values():  # first: a cheap check that fails before a model loads
            await r.start()
        if model.spec.startswith("local"):
            err.print("starting the embedded llama.cpp server…", highlight=False)
        for m in models.values():
            await m.start()
        for _, plan in plans:
            for cap, why in plan.requires.items():
                if not model.can(cap):
                    raise ModelError(f"{why}, which {model.spec} does not offer "
                                     f"(it offers: {', '.join(sorted(model.capabilities)) or 'none'})")
        for _, plan in plans:
            await bench.prepare(plan, model)
        for variant, plan in plans:
            code, res, doc = await _run_one(args, bench, opts, variant, plan, models,
                                            concurrency, cache, resources, err)
            results[variant], docs[variant] = res, doc
            worst = max(worst, code)
    finally:
        for r in resources.values():
            await r.close()
        for m in models.values():
            await m.close()
        if cache is not None:
            cache.close()
    out = tables_console(args.json)
    combined = bench.combine(results) if len(plans) > 1 else None
    if combined is not None:
        render_results(combined, out)
    else:
        for res in results.values():
            render_results(res, out)
    if args.json and not getattr(args, "embedded", False):
        doc = _envelope(bench.name, docs)
        if combined is not None:
            doc["tables"] = combined.to_json()["tables"]
        emit_json(True, doc)
    return worst


def _envelope(bench: str, docs: dict[str, Any]) -> dict[str, Any]:
    """One variant: its document; several: {benchmark, variants: {name: document}}."""
    if len(docs) == 1:
        return next(iter(docs.values()))
    warnings = [w for d in docs.values() for w in d.get("warnings", [])]
    return {"benchmark": bench, "variants": docs, "warnings": warnings}


async def _run_one(args: argparse.Namespace, bench: Benchmark, opts: Any, variant: str,
                   plan: RunPlan, models: dict[str, Model], concurrency: int,
                   cache: ResponseCache | None, resources: dict[str, Any],
                   err: Console) -> tuple[int, Results, dict[str, Any]]:
    model = models["model"]
    variant = plan.variant_label or variant
    run_dir = run_dir_for(Path(args.runs_dir), bench.name, variant, plan.prompting, model.label,
                          args.name)
    new_dir = not (run_dir / "manifest.json").exists()
    seed = args.seed if args.seed is not None else plan.config.get("seed", 0)
    manifest = base_manifest(
        benchmark=bench.name,
        variant=variant,
        prompting=plan.prompting,
        model={role: m.spec for role, m in models.items()},
        model_label=model.label,
        model_identity={role: m.identity() for role, m in models.items()},
        models={role: m.describe() for role, m in models.items()},
        options=options_dict(opts),
        config={"seed": seed, **plan.config},
        data=plan.provenance,
        n_items=len(plan.items),
        concurrency=concurrency,
        deterministic=model.deterministic(concurrency),
        command="mindprobe " + shlex.join(sys.argv[1:]),
    )
    store = RunStore(run_dir)
    done = store.open(manifest, retry_errors=args.retry_errors)
    if store.duplicates_dropped:
        err.print(f"[yellow]repaired[/yellow] {store.records_path}: dropped "
                  f"{store.duplicates_dropped} duplicated record(s), first of each kept")
    settings = PassSettings(
        concurrency=concurrency, seed=seed, cache=cache, config=plan.config,
        prompting=plan.prompting, resources=resources, item_time_limit=plan.item_time_limit,
        debug=args.debug,
    )
    t0 = time.perf_counter()
    try:
        result = await execute(plan.items, bench.run_item, models, store, done, settings,
                               console=err, description=f"{bench.name}:{variant}")
    except asyncio.CancelledError:
        store.close("interrupted")  # the command says so, with the resume line
        raise
    except BaseException:
        store.close("failed")
        if new_dir and not store.records():  # nothing to keep: leave no empty failed run
            shutil.rmtree(run_dir, ignore_errors=True)
            _prune_empty(run_dir.parent, Path(args.runs_dir))
        else:
            err.print(f"Finished records are kept in {run_dir}; resume with: "
                      f"{manifest['command']}", soft_wrap=True, markup=False)
        raise
    records = result.records
    res = failed_results(bench.name, records) or bench.results(records, plan)
    doc = {"run": str(run_dir), "variant": variant, **res.to_json(),
           "usage": usage_summary(records)}
    for role in models:
        if role != "model":
            doc[f"{role}_usage"] = usage_summary(records, role)
    status = "finished" if result.errors == 0 else "finished_with_errors"
    store.close(status, summary={"headline": res.headline_dict(), "usage": doc["usage"],
                                 "invalid": res.invalid_dict(), "failed": res.failed_dict(),
                                 "items_done": len(records)})
    endpoints = model.endpoint_stats()
    if endpoints:
        doc["endpoints"] = endpoints
    print_summary(err, run_dir, result, records, time.perf_counter() - t0, endpoints,
                  doc["usage"])
    return (1 if result.errors else 0), res, doc
