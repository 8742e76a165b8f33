"""`mindprobe run`: flags -> `RunSettings` and options, the library runs it, this prints.

The run's lifecycle (models, resources, capability check, manifest, store, interrupts) lives
in `mindprobe.engine.run`; `--dry-run` and `--estimate` plan only and print here.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from rich.console import Console

from mindprobe.commands.output import print_dry_run
from mindprobe.core.options import parse_assignments
from mindprobe.core.output import emit_json, tables_console
from mindprobe.core.plan import ModelFacts, RunPlan
from mindprobe.core.results import render_results
from mindprobe.core.secrets import command_line
from mindprobe.engine.run import Task, build_model, envelope, plan_all, prepare, run_task
from mindprobe.engine.settings import Reporter, RunSettings
from mindprobe.errors import UsageError
from mindprobe.models import Model

#: Defaults of --reasoning-effort / --reasoning (the CLI reads them; the library does not).
REASONING_EFFORT_ENV = "MINDPROBE_REASONING_EFFORT"
REASONING_ENV = "MINDPROBE_REASONING"


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


def settings_from_args(args: argparse.Namespace) -> RunSettings:
    """The common flags as the library's settings (reasoning flags default to the env)."""
    effort = getattr(args, "reasoning_effort", None) or os.environ.get(REASONING_EFFORT_ENV)
    thinks = getattr(args, "reasoning", False) or (os.environ.get(REASONING_ENV) or "").strip() \
        .lower() in ("1", "true", "yes", "on")
    return RunSettings(
        model=args.model, limit=args.limit, concurrency=args.concurrency, seed=args.seed,
        data_dir=args.data_dir, prompt_file=getattr(args, "prompt_file", None),
        runs_dir=args.runs_dir, name=getattr(args, "name", None),
        roles=parse_roles(args), cache=not args.no_cache, cache_file=args.cache,
        retry_errors=args.retry_errors, timeout=args.timeout, max_tokens=args.max_tokens,
        max_attempts=args.max_attempts, endpoints=getattr(args, "endpoints", None),
        replicas=getattr(args, "replicas", None), ray=getattr(args, "ray", None),
        threads=getattr(args, "threads", None), batch=getattr(args, "batch_size", None),
        context_window=getattr(args, "context_window", None),
        reasoning_effort=effort, reasoning=thinks, debug=getattr(args, "debug", False),
        command=command_line(), dry_run=getattr(args, "dry_run", False),
    )


def cmd_run(args: argparse.Namespace, err: Console) -> int:
    return run_command(args, err)[0]


def run_command(args: argparse.Namespace, err: Console, options: dict[str, Any] | None = None,
                embedded: bool = False) -> tuple[int, dict[str, Any]]:
    """Run (or resume) what `args` describe, with these benchmark options (default: the ones
    given); (exit code, JSON documents by variant). `embedded`: part of another command (e.g.
    a sweep), which prints the one JSON document itself."""
    settings = settings_from_args(args)
    task = prepare(args.benchmark, bench_option_values(args) if options is None else options,
                   settings)
    if getattr(task.opts, "estimate", False):
        return _estimate(args, task, settings, err), {}
    reporter = Reporter(err)
    if getattr(args, "dry_run", False):
        model = build_model(settings.model, settings)
        facts = ModelFacts.of(model)
        plans = plan_all(task, settings, facts, reporter)
        return _dry_run(args, task, plans, model, err, embedded), {}
    from mindprobe.tracking import check_targets, parse_target

    targets = [parse_target(t) for t in getattr(args, "log_to", None) or []]
    check_targets(targets)  # a tracker that cannot take the results: exit 2 before any item
    outcome = run_task(task, settings, reporter)
    if targets:
        from mindprobe.tracking import log_run

        verbose = getattr(args, "verbose", False)
        for res in outcome.results.values():
            if res.run_dir is not None:
                for key in log_run(res.run_dir, targets, reporter.warn, res,
                                   verbose=verbose):
                    err.print(f"logged {res.run_dir} to {key}", soft_wrap=True, markup=False,
                              highlight=False)
    out = tables_console(args.json)
    if outcome.combined is not None:
        render_results(outcome.combined, out)
    else:
        for res in outcome.results.values():
            render_results(res, out)
    if args.json and not embedded:
        emit_json(True, outcome.document(task.name))
    return outcome.code, outcome.docs


def _dry_run(args: argparse.Namespace, task: Task, plans: list[tuple[str, RunPlan]],
             model: Model, err: Console, embedded: bool = False) -> int:
    """How the items would be spread over the endpoints, and the requests (and tokens, where
    the benchmark estimates them) the run would take; nothing is started or sent."""
    from mindprobe.models.endpoints import spread

    bench, opts = task.bench, task.opts

    eps = model.endpoint_stats() or [{"endpoint": model.spec, "concurrency": None}]
    given = [e["concurrency"] for e in eps if e["concurrency"]]
    weights = [float(e["concurrency"] or (sum(given) / len(given) if given else 1.0))
               for e in eps]
    concurrency = args.concurrency or model.default_concurrency
    docs = {}
    for variant, plan in plans:
        variant = plan.variant_label or variant  # as the run names it (e.g. a --data-file's)
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
        stated = bench.precision(plan) if n else None
        print_dry_run(err, f"{bench.name}:{variant}", n, requests, bound, tokens, rows,
                      concurrency, stated.text() if stated is not None else None)
        docs[variant] = {"variant": variant, "dry_run": True, "items": n, "requests": requests,
                         "requests_bound": bound, "tokens": tokens,
                         "concurrency": concurrency, "endpoints": rows,
                         "stated_half_width": stated.half_width if stated else None,
                         "unit": stated.unit.strip() if stated else None,
                         "precision": stated.basis if stated else None,
                         "estimated": _estimated(plan)}
    emit_json(args.json and not embedded, envelope(bench.name, docs))
    return 0


def _estimate(args: argparse.Namespace, task: Task, settings: RunSettings,
              err: Console) -> int:
    """Tokens (and cost) without building a model: no API key, nothing sent."""
    facts = ModelFacts(settings.model, "estimate")
    settings.dry_run = True  # plans only: what a run would prepare first may be estimated
    quiet = _QuietNotes(err)
    docs = {}
    for v, plan in plan_all(task, settings, facts, quiet):
        v = plan.variant_label or v
        res = task.bench.estimate(plan, task.opts)
        render_results(res, err)
        docs[v] = {"variant": v, **res.to_json()}
    emit_json(args.json, envelope(task.name, docs))
    return 0


def _estimated(plan: RunPlan) -> dict[str, Any] | None:
    """Why the plan's numbers are estimates and which (`RunPlan.estimated`); None: exact."""
    return plan.estimated.to_json() if plan.estimated is not None else None


class _QuietNotes(Reporter):
    """--estimate shows warnings but not the plan's notes (nothing is loaded for a run)."""

    def note(self, message: str) -> None:
        pass

    def loading(self, what: str) -> None:
        pass
