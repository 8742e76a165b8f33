"""A judge pass over a finished run: the same executor as a run (progress, cache, retries,
resume, one record per item), over items the benchmark derives from the run's records; verdicts
go to the run's `judgements/<label>.jsonl` through the store. The model under test is never
asked again. `mindprobe judge` and `mindprobe.judge()` both call `judge_run`.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mindprobe.core.benchmark import Benchmark
from mindprobe.core.data import benchmark_folder
from mindprobe.core.loop import run_blocking
from mindprobe.core.paths import is_disk_full, path_component
from mindprobe.core.plan import Item, RunPlan
from mindprobe.core.results import Results
from mindprobe.core.runner import PassSettings, execute
from mindprobe.core.store import base_manifest, judgement_store, load_run, read_judgements
from mindprobe.engine.run import open_cache
from mindprobe.engine.settings import Reporter, check_cache_file, check_counts
from mindprobe.errors import UsageError
from mindprobe.models import Model, parse_model_spec
from mindprobe.registry import get_benchmark


@dataclass
class JudgeSettings:
    """The flags of `mindprobe judge` besides the run and the judge model."""

    label: str | None = None
    concurrency: int | None = None
    max_tokens: int | None = None
    cache: bool = True
    cache_file: str | Path | None = None
    timeout: float = 300.0
    max_attempts: int = 6
    debug: bool = False
    #: Where the run's data is (its benchmark folder or the data root; None: the folder the
    #: run recorded).
    data_dir: str | Path | None = None

    def check(self) -> None:
        check_counts(self, ("concurrency", "max_tokens", "max_attempts", "timeout"))
        if self.cache and self.cache_file:
            check_cache_file(self.cache_file)


@dataclass
class JudgeOutcome:
    results: Results
    label: str
    n_items: int
    n_verdicts: int
    failed: int
    judged_in_run: int


def judge_run(run_dir: str | Path, judge_spec: str, settings: JudgeSettings,
              reporter: Reporter, benchmark: str | None = None) -> JudgeOutcome:
    """Grade a finished run's answers with `judge_spec`; the results with every judge's
    verdicts (this one primary)."""
    settings.check()
    run = load_run(run_dir, benchmark)
    bench = get_benchmark(run.benchmark)
    plan = run.plan()
    if settings.data_dir:
        plan.data_dir = benchmark_folder(bench.name, settings.data_dir, bench.data_files)
    model = parse_model_spec(judge_spec, timeout=settings.timeout,
                             max_attempts=settings.max_attempts)
    label = path_component(settings.label or model.label, "judge label")
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
    failed = run_blocking(_judge_pass(settings, bench, plan, model, label, run.dir, todo,
                                      reporter))
    judged = read_judgements(run.dir).get(label, ({}, []))[1]
    res = run.results(label, plan=plan)
    res.run_dir = run.dir
    return JudgeOutcome(res, label, len(items), len(judged), failed, len(already))


async def _judge_pass(settings: JudgeSettings, bench: Benchmark, plan: RunPlan, model: Model,
                      label: str, run_dir: Path, todo: list[Item], reporter: Reporter) -> int:
    concurrency = settings.concurrency or model.default_concurrency
    model.configure(concurrency)
    cache = open_cache(settings.cache, settings.cache_file, [model], reporter.warn)
    store = judgement_store(run_dir, label)
    manifest = base_manifest(label=label, spec=model.spec, model={"judge": model.spec},
                             identity=model.identity(), benchmark=bench.name)
    config: dict[str, Any] = {**plan.config}
    if settings.max_tokens:
        config["max_tokens"] = settings.max_tokens
    try:
        await model.start()
        done = store.open(manifest)
        done = {k: r for k, r in done.items() if "error" not in r}  # failed: ask again
        pass_settings = PassSettings(concurrency=concurrency, cache=cache, config=config,
                                     options=plan.options, progress_role="judge",
                                     debug=settings.debug)
        result = await execute(todo, bench.judge_item, {"judge": model}, store, done,
                               pass_settings, console=reporter.console,
                               description=f"judge {label}")
        store.close("finished" if not result.errors else "finished_with_errors")
        return result.errors
    except BaseException as exc:
        full = is_disk_full(exc)
        if store._fd is not None:
            with contextlib.suppress(*((OSError,) if full else ())):
                store.close("interrupted")
        if full:
            raise store.disk_full() from None
        raise
    finally:
        await model.close()
        if cache is not None:
            cache.close()
