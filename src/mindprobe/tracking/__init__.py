"""Results where teams already track them: `--log-to mlflow[:URI]` / `--log-to wandb[:PROJECT]`
on `run` and `profile`, and `mindprobe export --format mlflow|wandb` for finished runs and
profiles. A tracker is checked before the run starts (a wrong URI, a server that does not
answer: one message, exit 2, nothing run). Each tracker run's id is kept in the run's manifest
(a profile's in profile.json) as soon as the tracker run exists, so logging again after a
resume or an interrupted logging updates that tracker run instead of adding another. A tracker
that fails once the run has finished is a warning: the results are never lost for it."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from mindprobe.core.files import write_file
from mindprobe.core.inputs import inside, read_json
from mindprobe.core.results import Results
from mindprobe.core.secrets import redact
from mindprobe.core.store import write_json_atomic
from mindprobe.errors import Interrupted, UsageError

from .content import artifacts_of, metric_name, params_of
from .target import KINDS, Target, check_target, parse_target, unreachable

__all__ = ["KINDS", "Target", "check_target", "check_targets", "log_profile", "log_run",
           "parse_target"]

Warn = Callable[[str], None]
#: The trackers' own loggers, quiet (warnings and errors only) unless `-v`.
TRACKER_LOGGERS = ("mlflow", "alembic", "wandb", "urllib3")


def check_targets(targets: Sequence[Target]) -> None:
    """Every tracker checked before the run starts (see `target.check_target`)."""
    for t in targets:
        check_target(t)


@contextlib.contextmanager
def quiet(verbose: bool) -> Iterator[None]:
    """The trackers' INFO lines (database migrations, "View run at …") kept off the terminal
    unless `verbose`; their warnings and errors still show."""
    if verbose:
        yield
        return
    loggers = [logging.getLogger(n) for n in TRACKER_LOGGERS]
    saved = [lg.level for lg in loggers]
    env = os.environ.get("MLFLOW_LOGGING_LEVEL")
    os.environ["MLFLOW_LOGGING_LEVEL"] = "WARNING"  # MLflow sets its level when imported
    for lg in loggers:
        lg.setLevel(logging.WARNING)
    try:
        yield
    finally:
        for lg, level in zip(loggers, saved, strict=True):
            lg.setLevel(level)
        if env is None:
            os.environ.pop("MLFLOW_LOGGING_LEVEL", None)
        else:
            os.environ["MLFLOW_LOGGING_LEVEL"] = env


def _send(target: Target, known: str | None, name: str, params: dict[str, str],
          metrics: dict[str, float], files: list[Path], tags: dict[str, str],
          parent: str | None, opened: Callable[[str], None], verbose: bool,
          folder: Path) -> str:
    if target.kind == "mlflow":
        from .mlflow_tracker import log

        user, password = target.credentials
        return log(target.uri, known, name, params, metrics, files, tags, parent, opened,
                   user, password)
    from .wandb_tracker import log as wandb_log

    return wandb_log(target.where, known, name, params, metrics, files, tags, group=parent,
                     opened=opened, verbose=verbose, folder=folder)


def _manifest(path: Path) -> dict[str, Any]:
    """A run's or profile's manifest through the one reader (finite numbers, size-capped)."""
    doc = read_json(path, "the manifest", "profile" if path.name == "profile.json" else "manifest")
    if not isinstance(doc, dict):
        raise UsageError(f"{path} is not a manifest (a JSON object)")
    return doc


def _remember(path: Path, target: Target, run_id: str) -> None:
    doc = _manifest(path)
    if doc.get("trackers", {}).get(target.key) == run_id:
        return
    doc.setdefault("trackers", {})[target.key] = run_id
    write_json_atomic(path, doc)


def relog_command(target: Target, folder: Path) -> str:
    """The command that logs `folder` (a run or a profile) to `target` later, with its
    `--to` (without it the export would go to the tracker's default, not here)."""
    return f"mindprobe export --format {target.kind} --run {folder}{target.to}"


def _log_one(target: Target, manifest_path: Path, name: str, params: dict[str, str],
             metrics: dict[str, float], files: list[Path], tags: dict[str, str], warn: Warn,
             parent: str | None = None, verbose: bool = False) -> str | None:
    """Log to one tracker; a failure is a warning naming the tracker and how to retry. What
    is sent (names, parameters, tags) and every message pass the secret masker."""
    folder = manifest_path.parent
    relog = relog_command(target, folder)
    why = None
    if target.kind == "mlflow" and (target.uri or "").startswith(("http://", "https://")):
        why = unreachable(target.uri, target.credentials)  # MLflow itself retries for minutes
    if why is None:
        known = _manifest(manifest_path).get("trackers", {}).get(target.key)
        clean = {redact(k): redact(v) for k, v in params.items()}
        labels = {redact(k): redact(v) for k, v in tags.items()}
        try:
            # Trackers print links and progress on stdout, which `--json` keeps for its JSON.
            with contextlib.redirect_stdout(sys.stderr), quiet(verbose):
                run_id = _send(target, known, redact(name), clean, metrics, files, labels,
                               parent, lambda rid: _remember(manifest_path, target, rid),
                               verbose, folder)
        except UsageError:
            raise
        except Exception as exc:  # a tracker's own errors are many and vary by version
            why = f"{type(exc).__name__}: {exc}"
        else:
            return run_id
    warn(redact(f"{target.key}: not logged ({why}); the run is unaffected. Log it later with "
                f"`{relog}`"))
    return None


@contextlib.contextmanager
def _interruptible(folder: Path, targets: Sequence[Target], warn: Warn) -> Iterator[None]:
    """Ctrl-C or SIGTERM while logging: said truly (the results are complete, the tracker
    run was closed), with the commands that log them again; then the usual exit (130/143)."""
    try:
        yield
    except Interrupted:
        raise
    except KeyboardInterrupt:
        again = " or ".join(f"`{relog_command(t, folder)}`" for t in targets)
        warn(redact(f"logging to {', '.join(t.key for t in targets)} interrupted (an MLflow "
                    f"run is closed as KILLED, a W&B run as failed); the results are complete "
                    f"in {folder}. Log them with {again}"))
        raise Interrupted from None


def _results(run_dir: Path) -> tuple[dict[str, Any], Results, int]:
    from mindprobe.core.store import load_run

    run = load_run(run_dir)
    return run.manifest, run.results(), len(run.records)


def _report(paths: Sequence[Path], folder: Path, title: str) -> Path:
    from mindprobe.report import build_report

    return write_file(folder / "report.html", build_report(list(paths), runs_dir=None,
                                                            title=title), replace=True)


def log_run(run_dir: Path, targets: Sequence[Target], warn: Warn,
            results: Results | None = None, parent: dict[str, str] | None = None,
            verbose: bool = False) -> list[str]:
    """Log one run to every target (`parent`: the profile's tracker run per target key);
    returns the keys of the targets it reached, for the command to confirm."""
    if not targets:
        return []
    if parent is None:  # a profile's run: the profile reports an interruption
        with _interruptible(run_dir, targets, warn):
            return log_run(run_dir, targets, warn, results, {}, verbose)
    manifest, res, n_records = _results(run_dir)
    if results is not None:
        res = results
    bench = str(manifest.get("benchmark"))
    name = f"{bench}:{manifest.get('variant')} {manifest.get('model_label')}"
    tags = {"mindprobe.benchmark": bench, "mindprobe.model": str(manifest.get("model_label")),
            "mindprobe.status": str(manifest.get("status"))}
    from .content import metrics_of

    metrics = metrics_of(bench, res)
    metrics[metric_name(bench, "items_done")] = float(n_records)
    with tempfile.TemporaryDirectory(prefix="mindprobe-log-") as tmp:
        files = [*artifacts_of(run_dir), _report([run_dir], Path(tmp), name)]
        return [t.key for t in targets
                if _log_one(t, run_dir / "manifest.json", name, params_of(manifest), metrics,
                            files, tags, warn, (parent or {}).get(t.key), verbose) is not None]


def log_profile(profile_dir: Path, targets: Sequence[Target], warn: Warn,
                verbose: bool = False) -> list[str]:
    """Log a profile: one parent tracker run (its identity, every benchmark's headline, the
    profile's report) and one nested run per benchmark run; returns the keys it reached."""
    if not targets:
        return []
    with _interruptible(profile_dir, targets, warn):
        return _log_profile(profile_dir, targets, warn, verbose)


def _log_profile(profile_dir: Path, targets: Sequence[Target], warn: Warn,
                 verbose: bool) -> list[str]:
    path = profile_dir / "profile.json"
    if not path.is_file():
        raise UsageError(f"{profile_dir} is not a profile folder (no profile.json)")
    doc = _manifest(path)
    benchmarks = doc.get("benchmarks", {})
    run_dirs = [d for b in (benchmarks.values() if isinstance(benchmarks, dict) else ())
                if isinstance(b, dict) for r in b.get("runs", [])
                if ((d := inside(profile_dir, r, f"{path}: a run")) / "manifest.json").is_file()]
    params: dict[str, str] = {}
    from .content import flatten, metrics_of

    for key in ("size", "model", "model_label", "model_identity", "judge", "seed", "versions"):
        if key in doc:
            flatten(key, doc[key], params)
    metrics: dict[str, float] = {}
    results = {d: _results(d) for d in run_dirs}
    for manifest, res, _ in results.values():
        bench = str(manifest.get("benchmark"))
        metrics.update({k: v for k, v in metrics_of(bench, res).items()
                        if k.startswith(f"{bench}/headline/")})
    name = f"profile {doc.get('model_label')} ({doc.get('size')})"
    report = profile_dir / "report.html"
    files = [path] + ([report] if report.is_file() else [])
    parents = {}
    for t in targets:
        rid = _log_one(t, path, name, params, metrics, files,
                       {"mindprobe.profile": str(doc.get("size"))}, warn, verbose=verbose)
        if rid is not None:
            parents[t.key] = rid if t.kind == "mlflow" else f"profile-{rid}"
    for d, (_, res, _) in results.items():
        log_run(d, [t for t in targets if t.key in parents], warn, res, parents, verbose)
    return list(parents)
