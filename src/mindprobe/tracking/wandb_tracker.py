"""Logging to Weights & Biases through its own client (`wandb.init`): one W&B run per mindprobe
run (a profile's runs share a group, with one run for the profile itself); the W&B run id is
kept by the caller and passed back with `resume="allow"`, so logging again after a resume
updates the same W&B run. `WANDB_MODE=offline` writes the run to files for `wandb sync`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mindprobe.errors import UsageError

PROJECT = "mindprobe"
_ARTIFACT_NAME = re.compile(r"[^A-Za-z0-9_\-.]+")


def log(project: str | None, run_id: str | None, name: str, params: dict[str, str],
        metrics: dict[str, float], artifacts: list[Path], tags: dict[str, str],
        group: str | None = None) -> str:
    """Create (or resume) one W&B run, set its config and summary, add the files as one
    artifact; its id."""
    try:
        import wandb
    except ImportError:
        raise UsageError("--log-to wandb needs W&B's client: pip install "
                         "'mindprobe[wandb]'") from None
    kwargs: dict[str, Any] = {"project": project or PROJECT, "name": name, "group": group,
                              "config": params, "tags": sorted(tags.values())[:60],
                              "reinit": "create_new", "settings": wandb.Settings(
                                  silent=True, console="off", x_disable_stats=True)}
    kwargs.update({"id": run_id, "resume": "allow"} if run_id else {})
    run = wandb.init(**kwargs)
    try:
        run.config.update(params, allow_val_change=True)
        run.log(metrics)
        run.summary.update(metrics)
        if artifacts:
            art = wandb.Artifact(_ARTIFACT_NAME.sub("-", f"{name}-files")[:128],
                                 type="mindprobe-run")
            for path in artifacts:
                art.add_file(str(path), name=path.name)
            run.log_artifact(art)
        return str(run.id)
    finally:
        run.finish()
