"""The Python API: run a benchmark, judge a run, load a run's results, list benchmarks.

`profile()` is `mindprobe profile` (every benchmark, one folder, one report).
`evaluate()` runs or resumes exactly what `mindprobe run` would (same run directory, records
and manifest; re-running resumes), `judge()` is `mindprobe judge`, `load_run()` reads a run
directory as `mindprobe analyse` does. They work in a script and inside a running event loop
(a Jupyter cell) alike; Ctrl-C keeps every finished item, as on the command line.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mindprobe.core.results import Results

if TYPE_CHECKING:
    import pandas as pd

    from mindprobe.core.store import Run as StoredRun
    from mindprobe.profiling.run import Profile
    from mindprobe.registry import BenchmarkInfo


def _option_values(options: Any) -> dict[str, Any]:
    """A dict of option names (`{"n_samples": 5}`; `-` or `_` alike), or an instance of the
    benchmark's Options dataclass (the fields it changes from their defaults)."""
    if options is None:
        return {}
    if dataclasses.is_dataclass(options) and not isinstance(options, type):
        return {f.name: getattr(options, f.name) for f in dataclasses.fields(options)
                if getattr(options, f.name) != f.default}
    return {str(k).replace("-", "_"): v for k, v in dict(options).items()}


def evaluate(task: str, model: str, *, options: dict[str, Any] | Any | None = None,
             limit: int | None = None, roles: dict[str, str] | None = None,
             runs_dir: str | Path | None = None, concurrency: int | None = None,
             cache: bool | str | Path = True, progress: bool = True, seed: int | None = None,
             data_dir: str | Path | None = None, prompt_file: str | Path | None = None,
             name: str | None = None,
             max_tokens: int | None = None, timeout: float = 300.0, max_attempts: int = 6,
             retry_errors: bool = False, reasoning_effort: str | None = None,
             reasoning: bool = False, endpoints: str | Path | None = None,
             context_window: int | None = None) -> Results:
    """Run (or resume) `task` (`name[:variant]`, see `list_benchmarks()`) against `model` (any
    `mindprobe models` spec) and return its results.

    `options` are the benchmark's typed options by name, validated as `mindprobe run` validates
    its flags. `cache` may name the response cache file. The returned `Results` carry
    `run_dir` and `document` (the JSON `mindprobe run --json` prints); for a group of
    variants (`already_said_that:all`) the benchmark's combined view, with each variant's
    results in `.variants`. `context_window` is `--context-window`: the model's window in
    tokens, whatever its backend reports (items that cannot fit it are never sent).
    """
    from mindprobe.engine.run import prepare, run_task
    from mindprobe.engine.settings import Reporter, RunSettings

    values = _option_values(options)
    settings = RunSettings(
        model=model, limit=limit, concurrency=concurrency, seed=seed, data_dir=data_dir,
        prompt_file=prompt_file,
        runs_dir=runs_dir if runs_dir is not None else "runs", name=name,
        roles=dict(roles or {}), cache=bool(cache),
        cache_file=cache if isinstance(cache, (str, Path)) else None,
        retry_errors=retry_errors, timeout=timeout, max_tokens=max_tokens,
        max_attempts=max_attempts, endpoints=endpoints, reasoning_effort=reasoning_effort,
        reasoning=reasoning, context_window=context_window)
    prepared = prepare(task, values, settings)
    outcome = run_task(prepared, settings, Reporter(progress=progress))
    if len(outcome.results) == 1:
        return next(iter(outcome.results.values()))
    res = outcome.combined or Results(prepared.name)
    res.variants = dict(outcome.results)
    res.document = outcome.document(prepared.name)
    return res


def judge(run_dir: str | Path, judge_model: str, *, label: str | None = None,
          concurrency: int | None = None, max_tokens: int | None = None,
          cache: bool | str | Path = True, progress: bool = True, timeout: float = 300.0,
          max_attempts: int = 6, data_dir: str | Path | None = None) -> Results:
    """Grade a finished run's answers with `judge_model` (`mindprobe judge`); verdicts are kept
    in the run under `label` (default: the judge's label) and a re-run resumes. `data_dir`:
    where the run's data is now, if not in the folder it recorded."""
    from mindprobe.engine.judge import JudgeSettings, judge_run
    from mindprobe.engine.settings import Reporter

    settings = JudgeSettings(label=label, concurrency=concurrency, max_tokens=max_tokens,
                             cache=bool(cache),
                             cache_file=cache if isinstance(cache, (str, Path)) else None,
                             timeout=timeout, max_attempts=max_attempts, data_dir=data_dir)
    return judge_run(run_dir, judge_model, settings, Reporter(progress=progress)).results


class Run:
    """A run directory: its manifest, its records (a DataFrame), and its results. Everything
    else a stored run offers (`benchmark`, `variant`, `model_label`, `status`, `warnings`,
    `plan()`) is the stored run's own."""

    def __init__(self, stored: StoredRun) -> None:
        self.stored = stored

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stored, name)

    @property
    def raw_records(self) -> list[dict[str, Any]]:
        return self.stored.records

    @property
    def records(self) -> pd.DataFrame:
        """One row per finished item (nested fields stay Python objects)."""
        import pandas as pd

        return pd.DataFrame(self.stored.records)

    def results(self, judge_label: str | None = None,
                data_dir: str | Path | None = None) -> Results:
        """The results `mindprobe analyse` (and the report) compute from the records alone,
        with every judge's verdicts (`judge_label`'s primary; default: the run's own). Its
        `state` (finished, partial, interrupted, failed; with the counts) is `mindprobe
        runs`'s. The data comes from the folder the run read, or `data_dir` (a benchmark's
        folder or the data root)."""
        return self.stored.results(judge_label, data_dir)


def load_run(run_dir: str | Path) -> Run:
    """Read a run directory (finished, interrupted or still running)."""
    from mindprobe.core.store import load_run as load

    return Run(load(run_dir))


def profile(model: str, *, size: str = "quick", judge: str | None = None,
            runs_dir: str | Path = "runs", out: str | Path | None = None,
            concurrency: int | None = None, cache: bool | str | Path = True,
            progress: bool = True, seed: int | None = None, data_dir: str | Path | None = None,
            options: dict[str, dict[str, Any]] | None = None, price: str | None = None,
            strict: bool = False, dry_run: bool = False, timeout: float = 300.0,
            max_attempts: int = 6) -> Profile:
    """Run (or resume) `mindprobe profile`: every benchmark in its paper's default setting at
    `size` (quick, standard, paper), at once under one `concurrency` budget, in one profile
    folder under `runs_dir`, then its report (`out`, default in the folder). `data_dir` is a
    root with one folder per benchmark; `options` are benchmark options by benchmark
    ({"sort": {"scoring": "text"}}). With `dry_run` only the plan is made (`.plan`)."""
    from mindprobe.engine.settings import Reporter, RunSettings
    from mindprobe.profiling import run as prun

    settings = RunSettings(model=model, concurrency=concurrency, seed=seed, runs_dir=runs_dir,
                           cache=bool(cache),
                           cache_file=cache if isinstance(cache, (str, Path)) else None,
                           timeout=timeout, max_attempts=max_attempts, dry_run=dry_run)
    req = prun.ProfileRequest(run=settings, size=size, judge=judge,
                              data_root=Path(data_dir) if data_dir else None,
                              options={b: _option_values(o) for b, o in (options or {}).items()},
                              out=Path(out) if out else None, price=price, strict=strict)
    reporter = Reporter(progress=progress)
    prof = prun.plan(req, reporter)
    return prof if dry_run else prun.execute(prof, req, reporter)


def list_benchmarks() -> dict[str, BenchmarkInfo]:
    """Every benchmark this installation knows (built-in and plugins), by name."""
    from mindprobe.registry import BENCHMARKS

    return dict(BENCHMARKS)
