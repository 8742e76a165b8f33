"""Results where teams already track them: `--log-to mlflow[:URI]` / `--log-to wandb[:PROJECT]`
on `run` and `profile`, and `mindprobe export --format mlflow|wandb` for finished runs and
profiles. Each tracker run's id is kept in the run's manifest (a profile's in profile.json), so
logging again after a resume updates that tracker run instead of adding another. A tracker
that cannot be reached is a warning: the mindprobe run itself never fails for it."""

from __future__ import annotations

import contextlib
import json
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from mindprobe.core.files import write_file
from mindprobe.core.results import Results
from mindprobe.core.store import write_json_atomic
from mindprobe.errors import UsageError

from .content import artifacts_of, metric_name, params_of

KINDS = ("mlflow", "wandb")
Warn = Callable[[str], None]


@dataclass(frozen=True)
class Target:
    """One tracker: `mlflow` with a tracking URI, or `wandb` with a project (None: default)."""

    kind: str
    where: str | None = None

    @property
    def key(self) -> str:
        """How the manifest names it: the kind and its place, without credentials."""
        where = self.where or ""
        parts = urlsplit(where)
        if "@" in parts.netloc:  # user:password@host: the key keeps the host only
            host = (parts.hostname or "") + (f":{parts.port}" if parts.port else "")
            where = urlunsplit(parts._replace(netloc=host))
        return f"{self.kind}:{where}" if where else self.kind


def parse_target(text: str) -> Target:
    """`mlflow`, `mlflow:URI`, `wandb` or `wandb:PROJECT`."""
    kind, _, where = text.partition(":")
    if kind not in KINDS or (where == "" and text.endswith(":")):
        raise UsageError(f"--log-to {text!r}: use mlflow[:TRACKING_URI] or wandb[:PROJECT]")
    return Target(kind, where or None)


def _reachable(target: Target) -> str | None:
    """Why the tracker cannot be reached (None: it can, or it needs no server)."""
    if target.kind != "mlflow" or not (target.where or "").startswith(("http://", "https://")):
        return None
    try:
        with urllib.request.urlopen(target.where.rstrip("/") + "/health", timeout=5):
            return None
    except urllib.error.HTTPError:
        return None  # it answered: a server behind a proxy may not serve /health
    except (OSError, ValueError) as exc:
        return str(getattr(exc, "reason", exc))


def _send(target: Target, known: str | None, name: str, params: dict[str, str],
          metrics: dict[str, float], files: list[Path], tags: dict[str, str],
          parent: str | None) -> str:
    if target.kind == "mlflow":
        from .mlflow_tracker import log

        return log(target.where, known, name, params, metrics, files, tags, parent)
    from .wandb_tracker import log as wandb_log

    return wandb_log(target.where, known, name, params, metrics, files, tags, group=parent)


def _remember(path: Path, target: Target, run_id: str) -> None:
    doc = json.loads(path.read_text())
    doc.setdefault("trackers", {})[target.key] = run_id
    write_json_atomic(path, doc)


def _log_one(target: Target, manifest_path: Path, name: str, params: dict[str, str],
             metrics: dict[str, float], files: list[Path], tags: dict[str, str], warn: Warn,
             parent: str | None = None) -> str | None:
    """Log to one tracker; a failure is a warning naming the tracker and how to retry."""
    why = _reachable(target)
    if why is None:
        known = json.loads(manifest_path.read_text()).get("trackers", {}).get(target.key)
        try:
            # Trackers print links and progress on stdout, which `--json` keeps for its JSON.
            with contextlib.redirect_stdout(sys.stderr):
                run_id = _send(target, known, name, params, metrics, files, tags, parent)
        except UsageError:
            raise
        except Exception as exc:  # a tracker's own errors are many and vary by version
            why = f"{type(exc).__name__}: {exc}"
        else:
            _remember(manifest_path, target, run_id)
            return run_id
    warn(f"{target.key}: not logged ({why}); the run is unaffected. Log it later with "
         f"`mindprobe export --format {target.kind} --run {manifest_path.parent}`")
    return None


def _results(run_dir: Path) -> tuple[dict[str, Any], Results, int]:
    from mindprobe.core.store import load_run

    run = load_run(run_dir)
    return run.manifest, run.results(), len(run.records)


def _report(paths: Sequence[Path], folder: Path, title: str) -> Path:
    from mindprobe.report import build_report

    return write_file(folder / "report.html", build_report(list(paths), runs_dir=None,
                                                            title=title), replace=True)


def log_run(run_dir: Path, targets: Sequence[Target], warn: Warn,
            results: Results | None = None, parent: dict[str, str] | None = None
            ) -> list[str]:
    """Log one run to every target (`parent`: the profile's tracker run per target key);
    returns the keys of the targets it reached, for the command to confirm."""
    if not targets:
        return []
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
                            files, tags, warn, (parent or {}).get(t.key)) is not None]


def log_profile(profile_dir: Path, targets: Sequence[Target], warn: Warn) -> list[str]:
    """Log a profile: one parent tracker run (its identity, every benchmark's headline, the
    profile's report) and one nested run per benchmark run; returns the keys it reached."""
    if not targets:
        return []
    path = profile_dir / "profile.json"
    if not path.is_file():
        raise UsageError(f"{profile_dir} is not a profile folder (no profile.json)")
    doc = json.loads(path.read_text())
    run_dirs = [profile_dir / r for b in doc.get("benchmarks", {}).values()
                for r in b.get("runs", []) if (profile_dir / r / "manifest.json").is_file()]
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
                       {"mindprobe.profile": str(doc.get("size"))}, warn)
        if rid is not None:
            parents[t.key] = rid if t.kind == "mlflow" else f"profile-{rid}"
    for d, (_, res, _) in results.items():
        log_run(d, [t for t in targets if t.key in parents], warn, res, parents)
    return list(parents)
