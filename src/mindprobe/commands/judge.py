"""`mindprobe judge BENCH --run DIR --judge SPEC`: a judge pass over a finished run.

The same executor as `run` (progress, cache, retries, resume, one record per item), over items
the benchmark derives from the run's records; verdicts go to the run's
`judgements/<label>.jsonl` through the store. The model under test is never asked again.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console

from mindprobe.commands.analyse import plan_of
from mindprobe.commands.output import emit_json, tables_console
from mindprobe.core.cache import ResponseCache
from mindprobe.core.loop import run_async
from mindprobe.core.paths import path_component, response_cache_path
from mindprobe.core.results import render_results
from mindprobe.core.runner import PassSettings, execute
from mindprobe.core.store import base_manifest, judgement_store, load_run, read_judgements
from mindprobe.errors import UsageError
from mindprobe.models import parse_model_spec
from mindprobe.registry import get_benchmark


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
        from mindprobe.commands.run import check_positive

        check_positive(args)
        bench = get_benchmark(args.benchmark)
        run = load_run(args.run, bench.name)
        plan = plan_of(run)
        model = parse_model_spec(args.judge, timeout=args.timeout, max_attempts=args.max_attempts)
        label = path_component(args.judge_label or model.label, "judge label")
        config = plan.config
        own = label == config.get("judge_label")
        if own and config.get("judge") != model.spec:
            raise UsageError(
                f"the run's own judge is labelled {label!r} but was {config.get('judge')}; "
                "pass --judge-label NAME for this judge"
            )
        items = bench.judge_items(run.records, plan)
        already = {r["id"] for r in run.records if isinstance(r.get("judge"), dict)} if own \
            else set()
        todo = [it for it in items if it.id not in already]
        failed = run_async(self._pass(args, bench, plan, model, label, run.dir, todo, err))
        judged = read_judgements(run.dir).get(label, ({}, []))[1]
        err.print(f"judge {label}: {len(items)} item(s) to grade; {len(judged)} verdict(s) "
                  f"recorded, {failed} failed, {len(already)} judged in the run itself")
        res = bench.results_with_judgements(run.records, plan, read_judgements(run.dir), label)
        render_results(res, tables_console(args.json))
        emit_json(args.json, res.to_json())
        return 1 if failed else 0

    @staticmethod
    async def _pass(args: argparse.Namespace, bench: Any, plan: Any, model: Any, label: str,
                    run_dir: Path, todo: list, err: Console) -> int:
        concurrency = args.concurrency or model.default_concurrency
        model.configure(concurrency)
        cache = None
        if not args.no_cache and model.cacheable:
            cache = ResponseCache(Path(args.cache) if args.cache else response_cache_path())
        store = judgement_store(run_dir, label)
        manifest = base_manifest(label=label, spec=model.spec, model={"judge": model.spec},
                                 identity=model.identity(), benchmark=bench.name)
        config = {**plan.config}
        if args.max_tokens:
            config["max_tokens"] = args.max_tokens
        try:
            await model.start()
            done = store.open(manifest)
            done = {k: r for k, r in done.items() if "error" not in r}  # failed: ask again
            settings = PassSettings(concurrency=concurrency, cache=cache, config=config,
                                    progress_role="judge", debug=args.debug)
            result = await execute(todo, bench.judge_item, {"judge": model}, store, done,
                                   settings, console=err, description=f"judge {label}")
            store.close("finished" if not result.errors else "finished_with_errors")
            return result.errors
        except BaseException:
            if store._fd is not None:
                store.close("interrupted")
            raise
        finally:
            await model.close()
            if cache is not None:
                cache.close()
