"""The cyclic GC and the process around a command: fixed costs every command pays.

Measured on a 2-core machine (`bench/harness_overhead.py --whole-process`): with CPython's
default collector thresholds, cyclic collections took ~0.35 s of a 4.5 s run of 20,000 items,
most of them walking objects that live until exit anyway (imported modules, the plan, the
records); tearing the interpreter down (freeing pandas, numpy, aiohttp and the run's data) took
another 0.15-0.25 s after the last line was printed, for 200 items as for 20,000.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

#: Young-generation threshold for the program's process (CPython's default is 700). A command
#: allocates long-lived objects in bulk and makes few reference cycles, so a collection every
#: 50,000 net allocations bounds cyclic garbage to a few MB while skipping ~98% of the walks.
GC_THRESHOLD = (50_000, 10, 10)


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic collection while a bulk load allocates: every collection it would trigger
    walks the whole growing heap, and plain decoded data makes no cycles to collect."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def tune_gc() -> None:
    """Collect cycles less often in this process (the program's own, never a library user's)."""
    gc.set_threshold(*GC_THRESHOLD)


def usable_cpus() -> int:
    """The cores this process may run on (its affinity, not the machine's count: a container
    or `taskset` gives fewer), at least 1: the one answer every pool and thread count sizes
    itself from."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def exit_now(code: int) -> NoReturn:
    """End the process with `code` once everything the command wrote is out, without the
    interpreter's teardown: atexit handlers still run (stopping an embedded server, say), and
    output is flushed; only the freeing of every object, which the OS does at once, is skipped.

    Falls back to a normal exit while a non-daemon thread is still running (the interpreter
    would wait for it) or where atexit's runner is not there to call (not CPython)."""
    run_exitfuncs = getattr(atexit, "_run_exitfuncs", None)
    others = [t for t in threading.enumerate()
              if t is not threading.main_thread() and not t.daemon and t.is_alive()]
    if run_exitfuncs is None or others:
        sys.exit(code)
    run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (BrokenPipeError, ValueError):  # a reader that left (`| head`), a closed stream
            pass
        except OSError as exc:  # output lost (a full disk): never a silent success
            with contextlib.suppress(OSError):
                os.write(2, f"mindprobe: could not write the output: {exc}\n".encode())
            code = code or 120  # what Python's own exit reports then
    os._exit(code)


#: Set once SIGTERM has asked the program to stop: it then ends as Ctrl-C does, but with the
#: status a shell expects of a terminated program (143 = 128 + 15, where Ctrl-C gives 130).
_TERMINATED = threading.Event()


def note_terminated() -> None:
    """SIGTERM arrived (the handler that turns it into an interrupt calls this)."""
    _TERMINATED.set()


def interrupt_status(clear: bool = False) -> int:
    """The exit status of an interrupted command: 143 after SIGTERM, else 130 (Ctrl-C);
    `clear`: forget an earlier SIGTERM (a new command in the same process)."""
    if clear:
        _TERMINATED.clear()
    return 143 if _TERMINATED.is_set() else 130


def terminate_as_interrupt() -> None:
    """SIGTERM (`timeout`, SLURM, `docker stop`) ends the program as Ctrl-C does, also outside
    the event loop (loading data, importing): finished work kept, the resume line printed."""
    import signal

    def on_term(signum: int, frame: object) -> None:
        note_terminated()
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
