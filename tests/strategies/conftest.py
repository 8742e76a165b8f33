"""Fixtures of the prompting-strategy and reasoning-model tests (the `cli` fixture is in
tests/conftest.py): no reasoning settings from the environment leak into a test."""

from __future__ import annotations

import pytest

REASONING_ENV = ("MINDPROBE_REASONING", "MINDPROBE_REASONING_EFFORT")


@pytest.fixture(autouse=True)
def _no_reasoning_env(monkeypatch):
    for name in REASONING_ENV:
        monkeypatch.setenv(name, "")  # undone after the test, whatever the CLI exported


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

