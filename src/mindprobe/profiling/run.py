"""A profile as one unit: its folder and manifest, the benchmarks run at once against the model
under one concurrency budget (each through the engine's run lifecycle), and the report.

Re-running resumes every unfinished benchmark; when all are finished the model is not even
started (nothing is sent), the results are read back from the runs and the report rewritten.
"""

from __future__ import annotations

import asyncio
import contextlib
import platform
from pathlib import Path
from typing import Any

from mindprobe.core.estimate import HEURISTIC
from mindprobe.core.files import write_file
from mindprobe.core.loop import run_blocking
from mindprobe.core.paths import data_root as cache_data_root
from mindprobe.core.plan import ModelFacts
from mindprobe.core.progress import progress_display
from mindprobe.core.results import Results
from mindprobe.core.run_state import RunState
from mindprobe.core.store import load_run, now_iso, write_json_atomic
from mindprobe.engine.run import Shared, build_model, open_cache, run_planned
from mindprobe.engine.settings import Reporter
from mindprobe.errors import DataError, Interrupted, MindprobeError, UsageError
from mindprobe.models import Model
from mindprobe.profiling.manifest import MANIFEST, read_profile
from mindprobe.profiling.plan import CANNOT, DONE, MISSING, Entry, plan_profile
from mindprobe.profiling.request import Profile, ProfileRequest, profile_dir
from mindprobe.version import __version__


def plan(ps: ProfileRequest, reporter: Reporter) -> Profile:
    """Build the model and plan every benchmark; no completion is requested (where work is
    left, the model is started to count sampled prompts with its tokenizer, then closed)."""
    ps.check()
    folder = Path(ps.run.runs_dir)
    model = build_model(ps.run.model, ps.run)
    where = profile_dir(folder, model.label, ps.size)
    facts = ModelFacts.of(model)
    entries = plan_profile(ps.size, ps.run, facts, reporter, ps.options, ps.data_root,
                           ps.judge, where / "runs")
    prof = Profile(where, model, ps.size, entries, data_root=ps.data_root or cache_data_root())
    # only a backend that may have a tokenizer is started for it (not a router of replicas)
    may_count = type(model).count_text is not Model.count_text
    if may_count and any(e.runnable and e.estimate for e in entries):
        prof.counted = run_blocking(_count_tokens(prof, ps, reporter))
    return prof


async def _count_tokens(prof: Profile, ps: ProfileRequest, reporter: Reporter) -> str:
    """Re-make each estimate with the model's tokenizer, where it offers one (the model is
    started for it and closed again; no completion is requested). Returns how tokens were
    counted, for the plan."""
    from mindprobe.core.estimate import counting
    from mindprobe.profiling.plan import estimate_of
    from mindprobe.profiling.tokens import measured_counter, template_tokens

    model = prof.model
    model.configure(ps.run.concurrency or model.default_concurrency)
    try:
        await model.start()
        per_message = await template_tokens(model)
        methods = set()
        for e in prof.entries:
            if not (e.runnable and e.estimate):
                continue
            counter = await measured_counter(model, lambda e=e: estimate_of(e), ps.run.seed or 0,
                                             per_message)
            if counter is None:
                return HEURISTIC
            with counting(counter):
                e.estimate = estimate_of(e)
            e.estimate["counted"] = counter.method
            methods.add(counter.method.split(" on ")[0])
        await _time_entries(prof, ps)
        return f"counted with {', '.join(sorted(methods))} on sampled texts"
    except MindprobeError as exc:
        reporter.warn(f"tokens are estimated (~4 characters per token): the model's "
                      f"tokenizer could not be asked ({exc})")
        return HEURISTIC
    finally:
        await model.close()


async def _time_entries(prof: Profile, ps: ProfileRequest) -> None:
    """Each entry's expected time, where the engine's speed can be measured (`timing`)."""
    from mindprobe.profiling.timing import engine_speed, expected_seconds

    model = prof.model
    speed = await engine_speed(model, ps.run.concurrency or model.default_concurrency)
    if speed is None:
        return
    prof.speed = speed
    for e in prof.entries:
        if e.runnable and e.estimate:
            seconds = expected_seconds(speed, e.estimate)
            if seconds is not None:
                e.estimate["expected_seconds"] = round(seconds, 1)


def _manifest(prof: Profile, ps: ProfileRequest) -> dict[str, Any]:
    return {
        "profile": 1,
        "size": prof.size,
        "model": prof.model.spec,
        "model_label": prof.model.label,
        "model_identity": prof.model.identity(),
        "judge": ps.judge,
        "seed": ps.run.seed,
        "concurrency": ps.run.concurrency or prof.model.default_concurrency,
        "versions": {"mindprobe": __version__, "python": platform.python_version()},
        "command": ps.run.command,
        "benchmarks": {e.name: {"setting": e.setting, "status": e.outcome,
                                **({"reason": e.reason} if e.reason else {}),
                                **({"fix": e.enable} if e.enable else {}),
                                "items": e.items, "done": e.done,
                                "stated_half_width": e.half_width, "unit": e.unit,
                                "runs": [str(d.relative_to(prof.dir)) for d in e.run_dirs],
                                **({"states": {str(d.relative_to(prof.dir)): st.as_dict()
                                               for d, st in e.states.items()}}
                                   if e.states else {})}
                       for e in prof.entries},
    }


def open_profile(prof: Profile, ps: ProfileRequest) -> None:
    """Create the profile's manifest, or check that the folder holds this very profile."""
    path = prof.dir / MANIFEST
    new = _manifest(prof, ps)
    if path.exists() or path.is_symlink():
        old = read_profile(prof.dir).doc
        for key in ("size", "model_identity", "judge", "seed"):
            if old.get(key) != new[key]:
                raise UsageError(
                    f"{prof.dir} holds a profile with another {key} ({old.get(key)!r}, now "
                    f"{new[key]!r}); give another --runs-dir, or the same {key}")
        new["created"] = old.get("created")
        if "trackers" in old:  # the tracker runs it was logged to (`--log-to`)
            new["trackers"] = old["trackers"]
    new["created"] = new.get("created") or now_iso()
    new["updated"] = now_iso()
    prof.dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, new)


def budgeted(model: Model, n: int) -> None:
    """At most `n` requests in flight to `model`, over every benchmark running at once (each
    keeps its own items in flight, so the server stays busy while one benchmark waits)."""
    sem = asyncio.Semaphore(n)
    complete, score = model.complete, model.score_choices

    async def limited_complete(request: Any, ctx: Any) -> Any:
        async with sem:
            return await complete(request, ctx)

    async def limited_score(request: Any, candidates: list[str], ctx: Any) -> Any:
        async with sem:
            return await score(request, candidates, ctx)

    model.complete = limited_complete  # type: ignore[method-assign]
    model.score_choices = limited_score  # type: ignore[method-assign]


async def _run_entries(prof: Profile, ps: ProfileRequest, todo: list[Entry],
                       reporter: Reporter) -> list[BaseException | None]:
    model = prof.model
    concurrency = ps.run.concurrency or model.default_concurrency
    model.configure(concurrency)
    if model.spec.startswith("local"):
        reporter.note("starting the embedded llama.cpp server…")
    await model.start()
    cache = open_cache(ps.run.cache, ps.run.cache_file, [model], reporter.warn)
    budgeted(model, concurrency)
    display = progress_display(reporter.console)
    display.start()
    try:
        shared = Shared(model, cache, display)
        outcomes = await asyncio.gather(
            *(run_planned(e.task, e.run_settings, e.plans, reporter, shared)  # type: ignore[arg-type]
              for e in todo), return_exceptions=True)
    finally:
        display.stop()
        await model.close()
        if cache is not None:
            cache.close()
    errors: list[BaseException | None] = []
    for e, out in zip(todo, outcomes, strict=True):
        if isinstance(out, BaseException):
            if not isinstance(out, MindprobeError):
                raise out  # Ctrl-C, a bug: every finished item is kept
            errors.append(out)
            e.status, e.reason = CANNOT, str(out)
        else:
            errors.append(None)
            prof.code = max(prof.code, out.code)
            prof.results[e.name] = out.results
    return errors


def execute(prof: Profile, ps: ProfileRequest, reporter: Reporter) -> Profile:
    """Run every unfinished benchmark at once, then read every finished one back and write
    the report; a benchmark that fails stops only itself."""
    blocked = [e for e in prof.entries if e.status in (MISSING, CANNOT)]
    if ps.strict and blocked:
        raise UsageError(f"--strict: {', '.join(e.name for e in blocked)} cannot run; the "
                         f"plan:\n{plan_text(prof.entries)}")
    nothing_runs(prof, plan_text(prof.entries))
    open_profile(prof, ps)
    todo = [e for e in prof.entries if e.runnable]
    if todo:
        try:
            errors = run_blocking(_run_entries(prof, ps, todo, reporter))
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the resume line, as a run prints it
            reporter.interrupted([d for e in todo for d in e.run_dirs], False,
                                 ps.run.command or resume_command(ps))
            raise Interrupted from None
        for e, err in zip(todo, errors, strict=True):
            if err is not None:
                reporter.warn(f"{e.name} stopped: {err}")
    for e in prof.entries:
        if e.status == DONE or (e.name not in prof.results and e.run_dirs and e.status != CANNOT):
            prof.results[e.name] = _read_back(e)
        e.states = _states(e)
    unfinished = [f"{e.name} ({e.outcome})" for e in todo if e.outcome != "finished"]
    if unfinished:  # a planned benchmark that did not finish is a failed command
        prof.code = max(prof.code, 1)
        reporter.warn(f"not finished: {', '.join(unfinished)}; the same command resumes")
    open_profile(prof, ps)
    prof.report = write_report(prof, ps, reporter)
    return prof


def resume_command(ps: ProfileRequest) -> str:
    """The `mindprobe profile` command that resumes this profile (for a library call)."""
    import shlex

    argv = ["mindprobe", "profile", "--model", ps.run.model, "--size", ps.size,
            "--runs-dir", str(ps.run.runs_dir)]
    if ps.judge:
        argv += ["--judge", ps.judge]
    if ps.data_root:
        argv += ["--data-dir", str(ps.data_root)]
    if ps.run.seed is not None:
        argv += ["--seed", str(ps.run.seed)]
    for bench, opts in ps.options.items():
        argv += [x for k, v in opts.items() for x in ("-O", f"{bench}.{k}={v}")]
    return shlex.join(argv)


def nothing_runs(prof: Profile, shown: str = "") -> None:
    """A profile none of whose benchmarks can run is an error (exit 2), planned or run: its
    plan (`shown`, or printed above) says each one's fix."""
    if any(e.runnable or e.status == DONE for e in prof.entries):
        return
    where = f"; the plan:\n{shown}" if shown else ": each one's fix is in the plan above"
    if all(e.status == MISSING for e in prof.entries):
        raise DataError(f"no benchmark of the profile has its data (looked in "
                        f"{prof.data_root}){where}")
    raise UsageError(f"no benchmark of the profile can run{where}")


def plan_text(entries: list[Entry]) -> str:
    """The plan in lines (what a library caller gets in an error; the CLI prints the table)."""
    lines = []
    for e in entries:
        line = f"  {e.name}: {e.status}"
        if e.items:
            line += f", {e.items:,} items ({e.done:,} done)"
        if e.reason:
            line += f": {e.reason}" + (f" (fix: {e.enable})" if e.enable else "")
        lines.append(line)
    return "\n".join(lines)


def _states(e: Entry) -> dict[Path, RunState]:
    """What each run of a benchmark came to (`core.run_state`, as `mindprobe runs` says)."""
    return {d: load_run(d).state for d in e.run_dirs if (d / "manifest.json").exists()}


def _read_back(e: Entry) -> dict[str, Results]:
    """A finished benchmark's results from its runs' records (what `mindprobe analyse` gives)."""
    out = {}
    for d in e.run_dirs:
        if (d / "manifest.json").exists():
            run = load_run(d)
            res = run.results()
            res.run_dir = d
            out[run.variant] = res
    return out


def not_run_of(prof: Profile, ps: ProfileRequest) -> dict[str, Any]:
    """The planned benchmarks that did not run, for the report: reason, fix, and the setting
    their published rows are read in (from the plan, where it got that far)."""
    from mindprobe.report.collect import NotRun

    out = {}
    for e in prof.entries:
        if prof.results.get(e.name) or e.states:  # it ran (its runs say how it ended)
            continue
        coords = None
        if e.task is not None and e.plans:
            variant, first = e.plans[0]
            with contextlib.suppress(MindprobeError, AttributeError, KeyError):
                coords = e.task.bench.published_coords(variant, first)
        why = f"{e.status}: {e.reason}" if e.reason else e.status
        out[e.name] = NotRun(why, e.enable, coords,
                             [ps.data_root / e.name] if ps.data_root else [])
    return out


def write_report(prof: Profile, ps: ProfileRequest, reporter: Reporter) -> Path:
    """The profile's one report (the `mindprobe report` page of its runs)."""
    from mindprobe.report import build_report

    out = ps.out or prof.dir / "report.html"
    fmt = {".md": "md", ".tex": "latex"}.get(out.suffix.lower(), "html")
    text = build_report([prof.dir / "runs"], runs_dir=None, fmt=fmt, price=ps.price,
                        title=f"mindprobe profile: {prof.model.label} ({prof.size})",
                        warn=reporter.warn, not_run=not_run_of(prof, ps))
    out.parent.mkdir(parents=True, exist_ok=True)
    # the profile's report is regenerated on every resume: replacing it is documented
    return write_file(out, text, replace=True, flag="--out" if ps.out else None)
