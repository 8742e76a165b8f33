"""Logging to Weights & Biases through its own client (`wandb.init`): one W&B run per mindprobe
run (a profile's runs share a group, with one run for the profile itself); the W&B run id is
handed to the caller (`opened`) as soon as the run exists and passed back with
`resume="allow"`, so logging again after a resume updates the same W&B run.
`WANDB_MODE=offline` writes the run to files for `wandb sync`. W&B's own capture of the
process (command line, program, git state, code, machine) is switched off: the command line
holds the model URL's credentials, and the run's identity is already its (masked) config."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mindprobe.errors import UsageError

PROJECT = "mindprobe"
_ARTIFACT_NAME = re.compile(r"[^A-Za-z0-9_\-.]+")


def settings(wandb: Any, verbose: bool = False) -> Any:
    """W&B's settings for a mindprobe run: no metadata (it records `sys.argv` raw), no git,
    no code, no machine info, no system metrics, no console capture; quiet unless verbose."""
    return wandb.Settings(silent=not verbose, quiet=not verbose, console="off",
                          x_disable_stats=True, x_disable_meta=True, x_disable_machine_info=True,
                          disable_git=True, disable_code=True, save_code=False,
                          disable_job_creation=True)


def log(project: str | None, run_id: str | None, name: str, params: dict[str, str],
        metrics: dict[str, float], artifacts: list[Path], tags: dict[str, str],
        group: str | None = None, opened: Callable[[str], None] | None = None,
        verbose: bool = False, folder: Path | None = None) -> str:
    """Create (or resume) one W&B run, set its config and summary, add the files as one
    artifact; its id. An interrupted logging ends the W&B run with a failing exit code."""
    try:
        import wandb
    except ImportError:
        raise UsageError("--log-to wandb needs W&B's client: pip install "
                         "'mindprobe[wandb]'") from None
    kwargs: dict[str, Any] = {"project": project or PROJECT, "name": name, "group": group,
                              "config": params, "tags": sorted(tags.values())[:60],
                              "reinit": "create_new", "settings": settings(wandb, verbose)}
    kwargs.update({"id": run_id, "resume": "allow"} if run_id else {})
    if folder is not None and not os.environ.get("WANDB_DIR"):
        # W&B's own files (offline runs for `wandb sync`) beside what they log, in the run's or
        # profile's folder: never a stray ./wandb in whatever folder the command ran from
        kwargs["dir"] = str(folder)
    run = wandb.init(**kwargs)
    code = 1
    try:
        if opened is not None:
            opened(str(run.id))
        run.config.update(params, allow_val_change=True)
        run.log(metrics)
        run.summary.update(metrics)
        if artifacts:
            art = wandb.Artifact(_ARTIFACT_NAME.sub("-", f"{name}-files")[:128],
                                 type="mindprobe-run")
            for path in artifacts:
                art.add_file(str(path), name=path.name)
            run.log_artifact(art)
        code = 0
        return str(run.id)
    finally:
        run.finish(exit_code=code)
