"""Every pass runs on uvloop where it is installed; MINDPROBE_EVENT_LOOP=asyncio opts out."""

from __future__ import annotations

import asyncio
import importlib.util

import pytest

from mindprobe.core.loop import loop_name, run_async


async def _loop_module() -> str:
    await asyncio.sleep(0)
    return type(asyncio.get_running_loop()).__module__


@pytest.mark.skipif(importlib.util.find_spec("uvloop") is None, reason="uvloop not installed")
def test_uvloop_by_default(monkeypatch):
    monkeypatch.delenv("MINDPROBE_EVENT_LOOP", raising=False)
    assert loop_name() == "uvloop"
    assert run_async(_loop_module()).startswith("uvloop")


def test_asyncio_on_request(monkeypatch):
    monkeypatch.setenv("MINDPROBE_EVENT_LOOP", "asyncio")
    assert loop_name() == "asyncio"
    assert run_async(_loop_module()).startswith("asyncio")


def test_exceptions_and_results_pass_through():
    async def boom() -> None:
        raise ValueError("x")

    with pytest.raises(ValueError):
        run_async(boom())
    assert run_async(asyncio.sleep(0, result=7)) == 7
