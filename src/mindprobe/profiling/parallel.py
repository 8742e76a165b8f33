"""The benchmarks of a profile planned at once, each in a thread of its own, heard in order.

A cold plan spends most of its time where the GIL is released (bz2 decoding an official
file, zlib compressing the data memos, a build in worker processes, files read), so the
benchmarks planned side by side take about as long as the slowest one, where one after
another took the sum. What each plan says (its loading lines, warnings and notes) is held
back and replayed, benchmark by benchmark, in the profile's order, when its turn comes: the
output and the errors are those of planning them one after another.

The threads are daemons: after Ctrl-C the command ends at once, as before, without waiting
for a plan that is still loading (what it was writing is written whole or not at all,
`core.files`).
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from mindprobe.engine.settings import Reporter

T = TypeVar("T")


class HeldReporter(Reporter):
    """A reporter that keeps what a plan says (`loading`, `warn`, `note`: the calls a plan
    makes) until `replay` tells the real one."""

    def __init__(self, reporter: Reporter) -> None:
        super().__init__(reporter.console)
        self._said: list[tuple[str, str]] = []

    def loading(self, what: str) -> None:
        self._said.append(("loading", what))

    def warn(self, message: str) -> None:
        self._said.append(("warn", message))

    def note(self, message: str) -> None:
        self._said.append(("note", message))

    def replay(self, reporter: Reporter) -> None:
        for method, text in self._said:
            getattr(reporter, method)(text)
        self._said.clear()


class _Job(Generic[T]):
    """One plan in its thread: its result or exception, once done."""

    def __init__(self, fn: Callable[[Reporter], T], reporter: Reporter) -> None:
        self.held = HeldReporter(reporter)
        self.done = threading.Event()
        self.result: T | None = None
        self.error: BaseException | None = None
        context = contextvars.copy_context()  # the caller's token counter, say
        self.thread = threading.Thread(target=context.run, args=(self._run, fn), daemon=True,
                                       name="mindprobe-plan")

    def _run(self, fn: Callable[[Reporter], T]) -> None:
        try:
            self.result = fn(self.held)
        except BaseException as exc:  # handed to the caller, in order (`outcome`)
            self.error = exc
        finally:
            self.done.set()

    def outcome(self, reporter: Reporter) -> T:
        while not self.done.wait(0.2):  # in short waits: Ctrl-C is heard at once, whichever
            pass  # thread the signal reached
        self.held.replay(reporter)
        if self.error is not None:
            error, self.error = self.error, None
            raise error
        return self.result  # type: ignore[return-value]


def planned_at_once(jobs: Sequence[Callable[[Reporter], T]], reporter: Reporter
                    ) -> list[Callable[[], T]]:
    """Start every job (each gets a reporter to speak to) in its own thread; one callable per
    job, in order, that waits for it, replays what it said to `reporter`, then returns its
    result or raises its exception. Call them in order: the output is then that of running
    the jobs one after another."""
    started = [_Job(fn, reporter) for fn in jobs]
    for job in started:
        job.thread.start()
    return [lambda job=job: job.outcome(reporter) for job in started]
