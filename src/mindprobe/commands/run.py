"""`mindprobe run`: prepare data, open (or resume) the run directory, execute, report."""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from mindprobe.commands.console import tables_console
from mindprobe.core.benchmark import (
    Benchmark,
    Prepared,
    RunOptions,
    get_benchmark,
    resolve_variants,
    split_bench_spec,
)
from mindprobe.core.cache import ResponseCache
from mindprobe.core.paths import response_cache_path
from mindprobe.core.runner import RunResult, execute, usage_summary
from mindprobe.core.store import RunStore, base_manifest
from mindprobe.errors import UsageError
from mindprobe.models import Model, parse_model_spec


def run_dir_for(runs_dir: Path, bench: str, variant: str, prompting: str, label: str) -> Path:
    """runs/<benchmark>/<variant>/<prompting>___<model> (the WorldSense naming convention)."""
    return Path(runs_dir) / bench / variant / f"{prompting}___{label}"


def bench_options(args: argparse.Namespace, variant: str, model: Model) -> RunOptions:
    return RunOptions(
        variant=variant,
        seed=args.seed,
        data_dir=Path(args.data_dir) if args.data_dir else None,
        limit=args.limit,
        extra=vars(args),
        supports_grammar=model.supports_grammar,
    )


def cmd_run(args: argparse.Namespace, err: Console) -> int:
    name, variant = split_bench_spec(args.benchmark)
    bench = get_benchmark(name)
    variants = resolve_variants(bench, variant)
    if args.limit is not None and args.limit < 1:
        raise UsageError("--limit must be a positive number")
    if args.concurrency is not None and args.concurrency < 1:
        raise UsageError("--concurrency must be a positive number")
    model = parse_model_spec(args.model, timeout=args.timeout, max_attempts=args.max_attempts)
    plans: list[tuple[str, RunOptions, Prepared]] = []
    for v in variants:
        opts = bench_options(args, v, model)
        prepared = bench.prepare(opts)
        if args.limit is not None and not prepared.limit_applied:
            prepared.items = prepared.items[: args.limit]
        prepared.model_label = model.label
        plans.append((v, opts, prepared))
    if getattr(args, "estimate", False) and hasattr(bench, "estimate"):
        for _v, opts, prepared in plans:
            bench.estimate(prepared, opts, err)
        return 0
    extra_specs = {role: s for _, _, p in plans for role, s in p.extra_models.items()}
    models: dict[str, Model] = {"model": model}
    for role, spec in extra_specs.items():
        models[role] = parse_model_spec(spec, timeout=args.timeout, max_attempts=args.max_attempts)
    args._variants = [v for v, _, _ in plans]
    return asyncio.run(_run_all(args, bench, plans, models, err))


async def _run_all(
    args: argparse.Namespace,
    bench: Benchmark,
    plans: list[tuple[str, RunOptions, Prepared]],
    models: dict[str, Model],
    err: Console,
) -> int:
    model = models["model"]
    concurrency = args.concurrency or model.default_concurrency
    for m in models.values():
        m.configure(concurrency)
    cache = None
    if not args.no_cache and any(m.cacheable for m in models.values()):
        cache = ResponseCache(Path(args.cache) if args.cache else response_cache_path())
    documents: dict[str, Any] = {}
    worst = 0
    try:
        for m in models.values():
            await m.start()
        for variant, _opts, prepared in plans:
            code, doc = await _run_one(args, bench, variant, prepared, models, concurrency, cache, err)
            documents[variant] = doc
            worst = max(worst, code)
    finally:
        for m in models.values():
            await m.close()
        if cache is not None:
            cache.close()
    out = tables_console(args.json)
    if len(plans) > 1 and hasattr(bench, "render_side_by_side"):
        bench.render_side_by_side({v: d for v, d in documents.items()}, out)
    if args.json:
        if getattr(bench, "json_by_variant", False):
            doc: Any = documents
        else:
            doc = documents[plans[0][0]] if len(plans) == 1 else documents
        sys.stdout.write(json.dumps(doc, indent=2, allow_nan=False, default=str) + "\n")
    return worst


async def _run_one(
    args: argparse.Namespace,
    bench: Benchmark,
    variant: str,
    prepared: Prepared,
    models: dict[str, Model],
    concurrency: int,
    cache: ResponseCache | None,
    err: Console,
) -> tuple[int, dict[str, Any]]:
    model = models["model"]
    run_dir = run_dir_for(Path(args.runs_dir), bench.name, variant, prepared.prompting, model.label)
    seed = args.seed if args.seed is not None else prepared.config.get("seed", 0)
    manifest = base_manifest(
        benchmark=bench.name,
        variant=variant,
        prompting=prepared.prompting,
        model={role: m.spec for role, m in models.items()},
        model_identity={role: m.identity() for role, m in models.items()},
        config={"seed": seed, **prepared.config},
        data=prepared.data,
        n_items=len(prepared.items),
        command="mindprobe " + shlex.join(sys.argv[1:]),
    )
    store = RunStore(run_dir)
    done = store.open(manifest, retry_errors=args.retry_errors)
    t0 = time.perf_counter()
    try:
        result = await execute(
            bench, prepared, models, store, done,
            concurrency=concurrency, seed=seed, cache=cache, console=err,
            description=f"{bench.name}:{variant}", debug=args.debug,
        )
    except asyncio.CancelledError:
        n = len(store.records())
        store.close("interrupted")
        err.print(
            f"\n[yellow]Interrupted[/yellow]: {n} of {len(prepared.items)} items are recorded in "
            f"{run_dir}.\nResume with: [bold]{manifest['command']}[/bold]"
        )
        raise
    except BaseException:
        store.close("failed")
        raise
    records = result.records
    metrics = bench.metrics(records, prepared)
    doc = {**metrics, "usage": usage_summary(records)}
    for role in models:
        if role != "model":
            doc[f"{role}_usage"] = usage_summary(records, role)
    status = "finished" if result.errors == 0 else "finished_with_errors"
    store.close(status, summary=_headline(doc))
    _print_summary(err, run_dir, result, records, time.perf_counter() - t0, cache)
    if not (len(args._variants) > 1 and hasattr(bench, "render_side_by_side")):
        bench.render(metrics, tables_console(args.json))
    return (1 if any("error" in r for r in records) else 0), doc


def _headline(doc: dict[str, Any]) -> dict[str, Any]:
    """What `mindprobe runs` shows: the benchmark's headline metric plus usage."""
    head = doc.get("headline")
    return {"headline": head, "usage": doc.get("usage")}


def _print_summary(
    err: Console, run_dir: Path, result: RunResult, records: list[dict], elapsed: float,
    cache: ResponseCache | None,
) -> None:
    u = usage_summary(records)
    t = Table(title=f"run {run_dir}", show_header=False, title_justify="left")
    t.add_row("items", f"{len(records)} / {result.n_items} ({result.n_new} new, {elapsed:.1f} s)")
    t.add_row("errors", f"[red]{u['errors']}[/red]" if u["errors"] else "0")
    t.add_row("requests", f"{u['requests']} (+{u['cache_hits']} from cache)")
    t.add_row(
        "tokens",
        f"prompt {u['prompt_tokens']:,} (cached {u['cached_prompt_tokens']:,}) · "
        f"completion {u['completion_tokens']:,}",
    )
    err.print(t)
    if u["errors"]:
        first = next(r for r in records if "error" in r)
        err.print(
            f"[red]{u['errors']} item(s) ended in errors[/red], e.g. {first['id']}: {first['error']}\n"
            "Re-run the same command with --retry-errors to try them again."
        )
