"""Fixtures of the prompting-strategy and reasoning-model tests: the CLI in-process (the e2e
pattern, copied so test folders stay independent), with the run-wide reasoning settings that
`--reasoning` / `--reasoning-effort` export cleared before and after every test."""

from __future__ import annotations

import json

import pytest

from mindprobe.cli import main

REASONING_ENV = ("MINDPROBE_REASONING", "MINDPROBE_REASONING_EFFORT")


@pytest.fixture(autouse=True)
def _no_reasoning_env(monkeypatch):
    for name in REASONING_ENV:
        monkeypatch.setenv(name, "")  # undone after the test, whatever the CLI exported


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


class Recorder:
    """A test-server responder that keeps every request body and answers with `answer(body)`."""

    def __init__(self, answer):
        self.answer = answer
        self.bodies: list[dict] = []

    def __call__(self, body: dict) -> str:
        self.bodies.append(body)
        return self.answer(body)


@pytest.fixture
def recorder():
    return Recorder
