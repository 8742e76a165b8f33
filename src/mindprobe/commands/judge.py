"""`mindprobe judge BENCH --run DIR --judge SPEC`: a judge pass over a finished run (the pass
itself is `mindprobe.engine.judge`; this parses the flags and prints).
"""

from __future__ import annotations

import argparse

from rich.console import Console

from mindprobe.commands.output import emit_json, tables_console
from mindprobe.core.results import render_results
from mindprobe.engine.judge import JudgeSettings, judge_run
from mindprobe.engine.settings import Reporter


class Judge:
    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        p.add_argument("--run", required=True, help="the run directory to judge")
        p.add_argument("--judge", required=True, help="judge model spec (any `mindprobe models` "
                       "spec)")
        p.add_argument("--judge-label", help="name of this judge's verdict file (default: the "
                       "judge model's label)")
        p.add_argument("--concurrency", type=int, help="judge calls in flight")
        p.add_argument("--max-tokens", type=int, help="judge reply cap (default: the benchmark's)")
        p.add_argument("--no-cache", action="store_true", help="do not use the response cache")
        p.add_argument("--cache", help="response cache file")
        p.add_argument("--timeout", type=float, default=300.0, help="seconds per request")
        p.add_argument("--max-attempts", type=int, default=6, help="attempts per request")
        p.add_argument("--json", action="store_true", help="print only JSON on stdout")

    def run(self, args: argparse.Namespace, err: Console) -> int:
        settings = JudgeSettings(
            label=args.judge_label, concurrency=args.concurrency, max_tokens=args.max_tokens,
            cache=not args.no_cache, cache_file=args.cache, timeout=args.timeout,
            max_attempts=args.max_attempts, debug=getattr(args, "debug", False))
        out = judge_run(args.run, args.judge, settings, Reporter(err), args.benchmark)
        err.print(f"judge {out.label}: {out.n_items} item(s) to grade; {out.n_verdicts} "
                  f"verdict(s) recorded, {out.failed} failed, {out.judged_in_run} judged in "
                  "the run itself")
        render_results(out.results, tables_console(args.json))
        emit_json(args.json, out.results.to_json())
        return 1 if out.failed else 0
