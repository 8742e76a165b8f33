"""The small verbs: list, models, runs, data fetch, and generic `analyse --run`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from mindprobe.commands.console import tables_console
from mindprobe.core.benchmark import Prepared, benchmark_names, get_benchmark
from mindprobe.core.data import fetch
from mindprobe.core.runner import usage_summary
from mindprobe.core.store import RunStore, iter_runs
from mindprobe.errors import UsageError
from mindprobe.models import MODEL_SPECS


def cmd_list(args: argparse.Namespace, err: Console) -> int:
    t = Table(title="benchmarks", title_justify="left")
    t.add_column("benchmark")
    t.add_column("variants")
    t.add_column("what it probes")
    for name in benchmark_names():
        b = get_benchmark(name)
        names = [f"{v}{' (default)' if v == b.default_variant else ''}" for v in b.variants]
        names += [f"{g} ({', '.join(vs)})" for g, vs in b.variant_groups.items()]
        t.add_row(name, "\n".join(names), b.title)
    tables_console().print(t)
    return 0


def cmd_models(args: argparse.Namespace, err: Console) -> int:
    t = Table(title="model specs (--model)", title_justify="left")
    t.add_column("spec")
    t.add_column("backend")
    for spec, what in MODEL_SPECS:
        t.add_row(spec, what)
    tables_console().print(t)
    return 0


def cmd_runs(args: argparse.Namespace, err: Console) -> int:
    t = Table(title=f"runs in {args.runs_dir}", title_justify="left")
    for col in ("run", "status", "items", "errors", "headline"):
        t.add_column(col)
    n = 0
    for run_dir in iter_runs(Path(args.runs_dir)):
        store = RunStore(run_dir)
        m = store.load_manifest()
        records = store.records()
        errors = sum(1 for r in records if "error" in r)
        head = (m.get("summary") or {}).get("headline")
        t.add_row(
            str(run_dir.relative_to(args.runs_dir)), m.get("status", "?"),
            f"{len(records)}/{m.get('n_items', '?')}", str(errors), _fmt_headline(head),
        )
        n += 1
    if n == 0:
        err.print(f"no runs under {args.runs_dir}")
        return 0
    tables_console().print(t)
    return 0


def _fmt_headline(head: Any) -> str:
    if not head:
        return "–"
    if isinstance(head, dict):
        return ", ".join(f"{k} {_num(v)}" for k, v in head.items())
    return str(head)


def _num(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def cmd_data(args: argparse.Namespace, err: Console) -> int:
    bench = get_benchmark(args.benchmark)
    files = getattr(bench, "data_files", None)
    if not files:
        err.print(f"{bench.name} needs no downloaded data (its items are generated)")
        return 0
    data_dir = Path(args.data_dir) if args.data_dir else None
    paths = fetch(bench.name, files, data_dir, err, include_optional=args.all)
    err.print(f"[green]{len(paths)} file(s) ready[/green] for {bench.name}")
    return 0


def cmd_analyse(args: argparse.Namespace, err: Console) -> int:
    """Benchmark-specific analysis (upstream results) if asked for, else recompute `--run`s."""
    bench = get_benchmark(args.benchmark)
    handler = getattr(bench, "analyse", None)
    if handler is not None:
        code = handler(args, err)
        if code is not None:
            return code
    if not args.run:
        raise UsageError(f"give --run DIR (a run of {bench.name}) or the benchmark's own options")
    docs: dict[str, Any] = {}
    out = tables_console(args.json)
    for run in args.run:
        store = RunStore(Path(run))
        manifest = store.load_manifest()
        if manifest.get("benchmark") != bench.name:
            raise UsageError(f"{run} is a {manifest.get('benchmark')} run, not {bench.name}")
        records = store.records()
        prepared = Prepared(items=[], prompting=manifest.get("prompting", "basic"),
                            config=manifest.get("config", {}), data=manifest.get("data", {}),
                            model_label=Path(run).name.split("___", 1)[-1])
        metrics = bench.metrics(records, prepared)
        docs[run] = {**metrics, "usage": usage_summary(records)}
        out.print(f"[bold]{run}[/bold] ({len(records)} records, status {manifest.get('status')})")
        bench.render(metrics, out)
    if args.json:
        doc = docs[args.run[0]] if len(docs) == 1 else docs
        sys.stdout.write(json.dumps(doc, indent=2, allow_nan=False, default=str) + "\n")
    return 0
