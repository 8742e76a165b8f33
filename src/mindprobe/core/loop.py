"""The event loop every pass runs on: uvloop where it is installed, else asyncio's own.

Against a fast server the harness's own CPU per request bounds throughput; uvloop (libuv)
spends about a quarter less per request than asyncio's selector loop (bench/harness_overhead.py).
`MINDPROBE_EVENT_LOOP=asyncio` keeps asyncio's loop, e.g. to rule uvloop out of a bug report.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def loop_name() -> str:
    """"uvloop" or "asyncio": the loop `run_async` uses here."""
    if os.environ.get("MINDPROBE_EVENT_LOOP", "").strip().lower() == "asyncio":
        return "asyncio"
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return "asyncio"
    return "uvloop"


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)` on the chosen loop; Ctrl-C cancels the main task as asyncio.run does."""
    if loop_name() == "asyncio":
        return asyncio.run(coro)
    import uvloop

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coro)
