"""Logging to MLflow through its own client (`mlflow.MlflowClient`): one MLflow run per
mindprobe run, nested under one parent run per profile; the MLflow run id is kept by the
caller, so logging again after a resume updates the same MLflow run."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from mindprobe.errors import UsageError

#: The experiment runs go to unless MLFLOW_EXPERIMENT_NAME says otherwise.
EXPERIMENT = "mindprobe"
_BATCH = 900  # MLflow takes at most 1,000 metrics and 100 params per log_batch call


def _client(uri: str | None) -> Any:
    try:
        from mlflow import MlflowClient
    except ImportError:
        raise UsageError("--log-to mlflow needs MLflow's client: pip install "
                         "'mindprobe[mlflow]'") from None
    return MlflowClient(tracking_uri=uri or None)


def _experiment(client: Any) -> str:
    name = os.environ.get("MLFLOW_EXPERIMENT_NAME", EXPERIMENT)
    exp = client.get_experiment_by_name(name)
    return exp.experiment_id if exp is not None else client.create_experiment(name)


def _existing(client: Any, run_id: str | None) -> Any:
    """The MLflow run logged before (None where it was deleted or never made)."""
    if not run_id:
        return None
    try:
        run = client.get_run(run_id)
    except Exception:  # MLflow raises its own RestException/MlflowException for a missing run
        return None
    return None if run.info.lifecycle_stage == "deleted" else run


def log(uri: str | None, run_id: str | None, name: str, params: dict[str, str],
        metrics: dict[str, float], artifacts: list[Path], tags: dict[str, str],
        parent: str | None = None) -> str:
    """Create (or update) one MLflow run; its id. Parameters already logged with the same
    value are not sent again (MLflow refuses to change one: a changed value goes to a tag)."""
    from mlflow.entities import Metric, Param, RunTag

    client = _client(uri)
    run = _existing(client, run_id)
    if run is None:
        all_tags = {**tags, "mlflow.runName": name}
        if parent:
            all_tags["mlflow.parentRunId"] = parent
        run = client.create_run(_experiment(client), run_name=name, tags=all_tags)
        logged: dict[str, str] = {}
    else:
        logged = dict(run.data.params)
        client.update_run(run.info.run_id, status="RUNNING")
    rid = run.info.run_id
    stamp = int(time.time() * 1000)
    # Each logging of one run is a step, so a resumed run's metrics show how they moved.
    step = int(run.data.tags.get("mindprobe.logged", "0"))
    new_params = [Param(k, v) for k, v in params.items() if k not in logged]
    changed = [RunTag(f"changed.{k}", v[:5000]) for k, v in params.items()
               if k in logged and logged[k] != v]
    entries = [Metric(k, v, stamp, step) for k, v in sorted(metrics.items())]
    for i in range(0, len(entries), _BATCH):
        client.log_batch(rid, metrics=entries[i:i + _BATCH])
    for i in range(0, len(new_params), 90):
        client.log_batch(rid, params=new_params[i:i + 90])
    tags = {**tags, "mindprobe.logged": str(step + 1)}
    tag_list = [RunTag(k, v) for k, v in tags.items()] + changed
    if tag_list:
        client.log_batch(rid, tags=tag_list)
    for path in artifacts:
        client.log_artifact(rid, str(path))
    client.set_terminated(rid)
    return rid
