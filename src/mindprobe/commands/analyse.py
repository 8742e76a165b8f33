"""`mindprobe analyse BENCH --run DIR…`: recompute a run's results from its records alone."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console

from mindprobe.core.output import emit_json, show_run, tables_console
from mindprobe.core.runner import usage_summary
from mindprobe.core.store import load_run
from mindprobe.errors import UsageError
from mindprobe.registry import get_benchmark


def cmd_analyse(args: argparse.Namespace, err: Console) -> int:
    bench = get_benchmark(args.benchmark)
    if not args.run:
        raise UsageError(f"give --run DIR (a run of {bench.name}) or the benchmark's own options")
    docs: dict[str, Any] = {}
    out = tables_console(args.json)
    for path in args.run:
        run = load_run(path, bench.name)
        for w in run.warnings:
            err.print(f"[yellow]warning[/yellow]: {w}", highlight=False)
        res = run.results(data_dir=args.data_dir)
        docs[path] = {**show_run(out, path, run, res), "usage": usage_summary(run.records)}
    emit_json(args.json, docs[args.run[0]] if len(docs) == 1 else {
        "benchmark": bench.name, "runs": docs,
        "warnings": [w for d in docs.values() for w in d.get("warnings", [])]})
    return 0
