"""Small in-process checks of modules the other fast tests reach only through a subprocess
(the human model behind a terminal) or a slow tracker run, so that `pytest -m "not slow"`
still imports every module (`--module-census`)."""

from __future__ import annotations

import asyncio

import pytest

from mindprobe.errors import UsageError


def test_mlflow_artifacts_go_beside_a_sqlite_store_never_the_working_folder(tmp_path):
    from mindprobe.tracking.mlflow_tracker import artifact_root

    root = artifact_root(f"sqlite:///{tmp_path}/m.db")
    assert root == (tmp_path / "m-artifacts").as_uri()
    assert artifact_root("http://127.0.0.1:5000") is None  # the server decides


def test_wandb_settings_keep_the_command_line_out():
    wandb = pytest.importorskip("wandb", reason="needs mindprobe[wandb] (installed by .[dev])")
    from mindprobe.tracking.wandb_tracker import settings

    s = settings(wandb)
    assert s.x_disable_meta and s.disable_git and s.disable_code and s.silent


def test_the_human_model_needs_a_terminal(monkeypatch):
    from mindprobe.models.human import HumanModel

    monkeypatch.setattr("sys.stdin.isatty", lambda: False, raising=False)
    with pytest.raises(UsageError, match="interactive terminal"):
        asyncio.run(HumanModel().start())
