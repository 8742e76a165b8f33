"""MR-GSM8K verbs: `judge` (grade T3 of a finished run) and `analyse` (runs, upstream files).

Re-judging reads the model's replies from the run's records and never asks the model again;
each judge's verdicts go to their own file (judging.py), so judges can be compared.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import deque
from pathlib import Path
from typing import Any

from rich.console import Console

from mindprobe.commands.console import tables_console
from mindprobe.core.cache import ResponseCache
from mindprobe.core.paths import response_cache_path
from mindprobe.core.progress import RunProgress
from mindprobe.core.session import Session
from mindprobe.core.store import RunStore
from mindprobe.errors import DataError, UsageError
from mindprobe.models import Model, parse_model_spec
from mindprobe.models.base import TransientError

from .judging import JudgeStore, check_label, judge_one, run_judges
from .prompts import MAX_TOKENS
from .report import render_judges, render_metrics, render_upstream
from .results import judges_doc, runtime_verdicts, scored_rows
from .upstream import rescore_upstream

BENCH = "mr_gsm8k"


def load_run(run: str) -> tuple[Path, dict[str, Any], list[dict[str, Any]]]:
    """(dir, manifest, records) of an MR-GSM8K run, or a clear error."""
    store = RunStore(Path(run))
    manifest = store.load_manifest()
    if manifest.get("benchmark") != BENCH:
        raise UsageError(f"{run} is a {manifest.get('benchmark')} run, not {BENCH}")
    return store.dir, manifest, store.records()


def _model_label(run_dir: Path) -> str:
    return run_dir.name.split("___", 1)[-1]


def compare_judges(run_dir: Path, manifest: dict[str, Any], records: list[dict[str, Any]],
                   primary: str | None) -> dict[str, Any]:
    """Metrics of a run with every judge; `primary` (default: the run's own or only judge)
    fills the top level."""
    judges = run_judges(run_dir, manifest, records)
    config = manifest.get("config") or {}
    if primary is not None and primary not in judges:
        known = ", ".join(judges) or "none yet"
        raise UsageError(f"{run_dir} has no judge labelled {primary!r}; judges: {known}")
    if primary is None:
        own = config.get("judge_label")
        primary = own if own in judges else (next(iter(judges)) if len(judges) == 1 else None)
    return judges_doc(records, config, _model_label(run_dir), judges, primary)


def _emit(docs: dict[str, dict[str, Any]], as_json: bool) -> None:
    if as_json:
        doc = next(iter(docs.values())) if len(docs) == 1 else docs
        sys.stdout.write(json.dumps(doc, indent=2, allow_nan=False, default=str) + "\n")


def analyse_command(args: argparse.Namespace, err: Console) -> int | None:
    """`analyse mr_gsm8k --upstream-results F…` or `--run DIR…`; None leaves it to the core."""
    out = tables_console(args.json)
    upstream = getattr(args, "upstream_results", None)
    if upstream:
        results = rescore_upstream(upstream, manual_key=getattr(args, "upstream_manual_key", None))
        render_upstream(results, out)
        _emit(results, args.json)
        return 0
    if not args.run:
        return None
    docs = {}
    for run in args.run:
        run_dir, manifest, records = load_run(run)
        doc = compare_judges(run_dir, manifest, records, getattr(args, "judge_label", None))
        out.print(f"[bold]{run}[/bold] ({len(records)} records, status {manifest.get('status')})")
        render_metrics(doc, out)
        render_judges(doc, out)
        docs[run] = doc
    _emit(docs, args.json)
    return 0


async def _judge_all(
    model: Model, label: str, run_dir: Path, todo: list[dict[str, Any]],
    args: argparse.Namespace, err: Console,
) -> tuple[int, int]:
    """Judge `todo` (T2-hit records) with bounded concurrency; returns (judged, failed)."""
    concurrency = args.concurrency or model.default_concurrency
    model.configure(concurrency)
    cache = None
    if not args.no_cache and model.cacheable:
        cache = ResponseCache(Path(args.cache) if args.cache else response_cache_path())
    store = JudgeStore(run_dir, label)
    queue: deque[dict[str, Any]] = deque()
    judged = failed = 0
    max_tokens = args.max_tokens or MAX_TOKENS
    try:
        await model.start()
        identity = model.identity()
        done = store.open(model.spec, identity)
        queue = deque(r for r in todo if r["uuid"] not in done)

        async def worker(bar: RunProgress) -> None:
            nonlocal judged, failed
            while queue:
                rec = queue.popleft()
                session = Session({"judge": model}, rec["uuid"], seed=0, cache=cache,
                                  identities={"judge": identity})
                try:
                    verdict = await judge_one(session, rec["judge_input"], rec["error_text"],
                                              max_tokens)
                except TransientError as exc:
                    failed += 1
                    err.print(f"[red]judge call failed[/red] for {rec['uuid']}: {exc}")
                    bar.advance(None, True)
                    continue
                finally:
                    session.release()
                usage = session.usage_dict().get("judge")
                store.append({"id": rec["uuid"], **verdict, "usage": usage})
                judged += 1
                bar.advance(usage, False)

        with RunProgress(err, f"judge {label}", total=len(queue), done=0) as bar:
            n = max(1, min(concurrency, len(queue)))
            await asyncio.gather(*(worker(bar) for _ in range(n)))
    finally:
        store.close()
        await model.close()
        if cache is not None:
            cache.close()
    return judged, failed


class JudgeCommand:
    """`mindprobe judge mr_gsm8k --run DIR --judge MODEL-SPEC`: grade T3 of a finished run."""

    def add_arguments(self, group: argparse._ArgumentGroup) -> None:
        group.add_argument("--run", required=True, help="mr_gsm8k: the run directory to judge")
        group.add_argument("--judge", required=True,
                           help="mr_gsm8k: judge model spec (any `mindprobe models` spec)")
        group.add_argument("--judge-label", help="mr_gsm8k: name of this judge's verdict file "
                           "(default: the judge model's label)")
        group.add_argument("--concurrency", type=int, help="judge calls in flight")
        group.add_argument("--max-tokens", type=int, help=f"judge reply cap (default {MAX_TOKENS})")
        group.add_argument("--no-cache", action="store_true", help="do not use the response cache")
        group.add_argument("--cache", help="response cache file")
        group.add_argument("--timeout", type=float, default=300.0, help="seconds per request")
        group.add_argument("--max-attempts", type=int, default=6, help="attempts per request")
        group.add_argument("--json", action="store_true", help="print only JSON on stdout")

    def run(self, args: argparse.Namespace, err: Console) -> int:
        if args.concurrency is not None and args.concurrency < 1:
            raise UsageError("--concurrency must be a positive number")
        run_dir, manifest, records = load_run(args.run)
        model = parse_model_spec(args.judge, timeout=args.timeout, max_attempts=args.max_attempts)
        label = check_label(args.judge_label or model.label)
        config = manifest.get("config") or {}
        own = label == config.get("judge_label")
        if own and config.get("judge") != model.spec:
            raise UsageError(
                f"the run's own judge is labelled {label!r} but was {config.get('judge')}; "
                "pass --judge-label NAME for this judge"
            )
        already = set(runtime_verdicts(records)) if own else set()
        todo = [r for r in scored_rows(records) if r["t2_hit"] and r["uuid"] not in already]
        for rec in todo:
            if "judge_input" not in rec:
                raise DataError(
                    f"{run_dir}: record {rec['uuid']} lacks 'judge_input' (made by an older "
                    "mindprobe?); re-run the model to judge it"
                )
        judged, failed = asyncio.run(_judge_all(model, label, run_dir, todo, args, err))
        n_hits = sum(r["t2_hit"] for r in scored_rows(records))
        err.print(
            f"judge {label}: {n_hits} step hit(s) to grade; {judged} new verdict(s), "
            f"{failed} failed, {n_hits - judged - failed} judged before"
        )
        doc = compare_judges(run_dir, manifest, records, label)
        out = tables_console(args.json)
        render_metrics(doc, out)
        render_judges(doc, out)
        _emit({args.run: doc}, args.json)
        return 1 if failed else 0
