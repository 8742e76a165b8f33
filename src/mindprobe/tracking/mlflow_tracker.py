"""Logging to MLflow through its own client (`mlflow.MlflowClient`): one MLflow run per
mindprobe run, nested under one parent run per profile. The MLflow run's id is handed to the
caller (`opened`) the moment the run exists, before anything is sent, so a logging cut short
(Ctrl-C, SIGTERM, kill -9) is resumed into the same MLflow run; a logging that stops is closed
as KILLED (interrupted) or FAILED (an error), never left RUNNING by mindprobe."""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from mindprobe.errors import UsageError

#: The experiment runs go to unless MLFLOW_EXPERIMENT_NAME says otherwise.
EXPERIMENT = "mindprobe"
_BATCH = 900  # MLflow takes at most 1,000 metrics and 100 params per log_batch call
#: Tag counting the loggings of one MLflow run: each is one step of its metrics.
LOGGED_TAG = "mindprobe.logged"


def _client(uri: str | None) -> Any:
    try:
        from mlflow import MlflowClient
    except ImportError:
        from .target import MLFLOW_MISSING

        raise UsageError(MLFLOW_MISSING) from None
    return MlflowClient(tracking_uri=uri or None)


def artifact_root(uri: str) -> str | None:
    """Where a new experiment keeps its artifacts: beside a SQLite store (`FILE.db` ->
    `FILE-artifacts/`), under mindprobe's cache for another database; None where the store
    decides (a tracking server, a folder store). MLflow's own default, `./mlruns` in whatever
    folder the command ran in, scatters artifacts away from their store."""
    from .target import sqlite_path

    scheme = uri.partition(":")[0].lower().split("+")[0] if ":" in uri else ""
    if scheme == "sqlite":
        path = sqlite_path(uri)
        if path is not None:
            return (path.resolve().parent / f"{path.stem}-artifacts").as_uri()
    if scheme in ("postgresql", "mysql", "mssql"):
        from mindprobe.core.paths import cache_dir

        return (cache_dir() / "mlflow-artifacts").resolve().as_uri()
    return None


def _experiment(client: Any, uri: str) -> str:
    name = os.environ.get("MLFLOW_EXPERIMENT_NAME", EXPERIMENT)
    exp = client.get_experiment_by_name(name)
    if exp is not None:
        return exp.experiment_id
    return client.create_experiment(name, artifact_location=artifact_root(uri))


def _existing(client: Any, run_id: str | None) -> Any:
    """The MLflow run logged before (None where it was deleted or never made)."""
    if not run_id:
        return None
    try:
        run = client.get_run(run_id)
    except Exception:  # MLflow raises its own RestException/MlflowException for a missing run
        return None
    return None if run.info.lifecycle_stage == "deleted" else run


@contextlib.contextmanager
def credentials(user: str | None, password: str | None) -> Iterator[None]:
    """The URI's userinfo as MLflow takes it (MLFLOW_TRACKING_USERNAME/PASSWORD, HTTP Basic)
    for the duration of one logging; the environment is restored after."""
    if user is None:
        yield
        return
    names = ("MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD")
    saved = {n: os.environ.get(n) for n in names}
    os.environ.update(zip(names, (user, password or ""), strict=True))
    try:
        yield
    finally:
        for n, v in saved.items():
            if v is None:
                os.environ.pop(n, None)
            else:
                os.environ[n] = v


def log(uri: str | None, run_id: str | None, name: str, params: dict[str, str],
        metrics: dict[str, float], artifacts: list[Path], tags: dict[str, str],
        parent: str | None = None, opened: Callable[[str], None] | None = None,
        user: str | None = None, password: str | None = None) -> str:
    """Create (or reopen) one MLflow run and log into it; its id. Parameters already logged
    with the same value are not sent again (MLflow refuses to change one: a changed value
    goes to a tag)."""
    with credentials(user, password):
        client = _client(uri)
        run = _existing(client, run_id)
        if run is None:
            all_tags = {**tags, "mlflow.runName": name}
            if parent:
                all_tags["mlflow.parentRunId"] = parent
            resolved = uri or str(client.tracking_uri)
            run = client.create_run(_experiment(client, resolved), run_name=name,
                                    tags=all_tags)
        else:
            client.update_run(run.info.run_id, status="RUNNING")
        rid = run.info.run_id
        if opened is not None:
            opened(rid)
        try:
            _fill(client, run, params, metrics, artifacts, tags)
        except KeyboardInterrupt:
            _close(client, rid, "KILLED")
            raise
        except BaseException:
            _close(client, rid, "FAILED")
            raise
        client.set_terminated(rid)
        return rid


def _close(client: Any, rid: str, status: str) -> None:
    """Mark the run ended as `status`; a tracker that fails here changes nothing more."""
    with contextlib.suppress(Exception):
        client.set_terminated(rid, status=status)


def _fill(client: Any, run: Any, params: dict[str, str], metrics: dict[str, float],
          artifacts: list[Path], tags: dict[str, str]) -> None:
    """One logging: the metrics as one more step (names logged before and no longer current
    get NaN there, so no stale value stays the latest), new parameters, tags, files."""
    from mlflow.entities import Metric, Param, RunTag

    rid = run.info.run_id
    logged = dict(run.data.params)
    stamp = int(time.time() * 1000)
    step = int(run.data.tags.get(LOGGED_TAG, "0"))
    stale = {k: math.nan for k in run.data.metrics if k not in metrics}
    entries = [Metric(k, v, stamp, step) for k, v in sorted({**metrics, **stale}.items())]
    for i in range(0, len(entries), _BATCH):
        client.log_batch(rid, metrics=entries[i:i + _BATCH])
    new_params = [Param(k, v) for k, v in params.items() if k not in logged]
    for i in range(0, len(new_params), 90):
        client.log_batch(rid, params=new_params[i:i + 90])
    changed = [RunTag(f"changed.{k}", v[:5000]) for k, v in params.items()
               if k in logged and logged[k] != v]
    tag_list = [RunTag(k, v) for k, v in {**tags, LOGGED_TAG: str(step + 1)}.items()] + changed
    client.log_batch(rid, tags=tag_list)
    for path in artifacts:
        client.log_artifact(rid, str(path))
