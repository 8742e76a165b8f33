"""The event loop every pass runs on: uvloop where it is installed, else asyncio's own.

Against a fast server the harness's own CPU per request bounds throughput; uvloop (libuv)
spends about a quarter less per request than asyncio's selector loop (bench/harness_overhead.py).
`MINDPROBE_EVENT_LOOP=asyncio` keeps asyncio's loop, e.g. to rule uvloop out of a bug report.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Coroutine
from typing import Any, TypeVar

from mindprobe.core.process import note_terminated

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
    """`asyncio.run(coro)` on the chosen loop. Ctrl-C cancels the main task as asyncio.run does,
    and so does SIGTERM (`timeout`, SLURM, `docker stop`): finished work is kept and the run
    says it was interrupted, even where SIGINT is ignored (a background job of a script)."""
    factory = None
    if loop_name() == "uvloop":
        import uvloop

        factory = uvloop.new_event_loop
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(_terminable(coro))


def run_blocking(coro: Coroutine[Any, Any, T]) -> T:
    """`run_async(coro)`, also from inside a running event loop (a Jupyter cell): there the
    coroutine runs on a loop of its own in a worker thread while the caller waits; Ctrl-C
    while waiting cancels it as it would in a script (finished work kept), then re-raises."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run_async(coro)
    import concurrent.futures
    import threading

    started: concurrent.futures.Future[tuple[asyncio.AbstractEventLoop, asyncio.Task]] = \
        concurrent.futures.Future()

    async def main() -> T:
        started.set_result((asyncio.get_running_loop(), asyncio.current_task()))
        return await coro

    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = run_async(main())
        except BaseException as exc:  # handed to the waiting caller
            box["error"] = exc
            if not started.done():
                started.set_exception(exc)

    worker = threading.Thread(target=work, name="mindprobe-run", daemon=True)
    worker.start()
    try:
        worker.join()
    except KeyboardInterrupt:
        with contextlib.suppress(Exception):
            loop, task = started.result(timeout=5)
            loop.call_soon_threadsafe(task.cancel)
        worker.join()
        raise
    if "error" in box:
        raise box["error"]
    return box["value"]


async def _terminable(coro: Coroutine[Any, Any, T]) -> T:
    """`coro`, cancelled on SIGTERM and then ended by KeyboardInterrupt, as on Ctrl-C."""
    task, loop = asyncio.current_task(), asyncio.get_running_loop()
    terminated = False

    def on_term() -> None:
        nonlocal terminated
        terminated = True
        note_terminated()
        if task is not None:
            task.cancel()

    previous = signal.getsignal(signal.SIGTERM)
    try:
        loop.add_signal_handler(signal.SIGTERM, on_term)
        installed = True
    except (NotImplementedError, RuntimeError, ValueError):
        installed = False  # no signal handlers in a worker thread or on Windows: Ctrl-C only
    try:
        return await coro
    except asyncio.CancelledError:
        if terminated:
            raise KeyboardInterrupt from None
        raise
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGTERM)
            if previous is not None:  # the program's own handler (terminate_as_interrupt)
                signal.signal(signal.SIGTERM, previous)
