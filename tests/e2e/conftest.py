"""Helpers for end-to-end CLI tests: run `mindprobe` in-process or as a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from mindprobe.cli import main


@pytest.fixture
def cli(tmp_path, capsys, monkeypatch):
    """cli(*args) -> (exit code, parsed stdout JSON or text, stderr), isolated caches."""
    monkeypatch.setenv("MINDPROBE_CACHE_DIR", str(tmp_path / "cache"))

    def run(*args: str):
        code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        try:
            doc = json.loads(out) if "--json" in args else out
        except ValueError:
            doc = out
        return code, doc, err
    return run


@pytest.fixture
def spawn(tmp_path):
    """spawn(args) -> `python -m mindprobe.cli ...` as a real process (kill -9 / Ctrl-C tests)."""
    env = {**os.environ, "MINDPROBE_CACHE_DIR": str(tmp_path / "cache"), "PYTHONUNBUFFERED": "1"}

    def start(args: list) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "mindprobe.cli", *map(str, args)],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return start
