"""The progress bar of a run: items, rate, ETA, tokens and errors, on stderr."""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Column
from rich.text import Text

#: Seconds between the plain progress lines written where there is no terminal.
LOG_EVERY_S = 30.0


class RateColumn(ProgressColumn):
    """Items finished in this process over its elapsed time: steady for slow multi-turn items,
    where rich's windowed speed swings between nothing and thousands per second."""

    def render(self, task: Task) -> Text:
        speed = _rate(task.completed - task.fields["resumed_at"], task.elapsed)
        return Text(f"{speed:,.2f} it/s" if speed else "– it/s", style="progress.data.speed")


def _rate(done: float, elapsed: float | None) -> float | None:
    return done / elapsed if done > 0 and elapsed else None


def _k(n: int) -> str:
    return f"{n / 1e6:.2f}M" if n >= 1e6 else f"{n / 1e3:.1f}k" if n >= 1e4 else str(n)


def progress_display(console: Console) -> Progress:
    """The display of one run, or of several at once (`mindprobe profile`: a line each)."""
    narrow = console.width < 120
    keep = Column(no_wrap=True)  # counts are never folded away
    columns: list[ProgressColumn] = [
        # a long benchmark:variant name is cut, never the counts beside it
        TextColumn("[bold]{task.description}", table_column=Column(
            no_wrap=True, overflow="ellipsis", max_width=20 if narrow else 40)),
        MofNCompleteColumn(table_column=keep), RateColumn(table_column=keep),
        TimeElapsedColumn(table_column=keep)]
    if not narrow:
        columns[1:1] = [BarColumn(bar_width=None)]
        columns += [TextColumn("ETA"), TimeRemainingColumn()]
    columns += [TextColumn("{task.fields[tokens]}", table_column=keep),
                TextColumn("{task.fields[errs]}", table_column=keep)]
    return Progress(*columns, console=console, disable=not console.is_terminal,
                    refresh_per_second=4, transient=False)


class RunProgress:
    """Thin wrapper so the runner calls one cheap method per finished item. With `shared`
    (a `progress_display` started by the caller) it is one line of that display."""

    def __init__(self, console: Console, description: str, total: int, done: int,
                 shared: Progress | None = None) -> None:
        self.console = console
        self.prompt = self.cached = self.completion = self.errors = self.requests = 0
        self._pending = 0
        self._dirty = False
        self._last = 0.0
        self.narrow = console.width < 120
        self._owned = shared is None
        self._progress = shared if shared is not None else progress_display(console)
        self._task: TaskID = self._progress.add_task(
            description, total=total, completed=done, tokens=self._tokens(), errs="",
            resumed_at=done)
        # Without a terminal (nohup, a cluster log) a plain line now and then instead.
        self._log_every = None if console.is_terminal else LOG_EVERY_S
        self._last_line = time.monotonic()

    def _tokens(self) -> str:
        """Requests and tokens so far: they move with every reply, also inside a long chat."""
        if self.narrow:
            return f"{_k(self.requests)} req · {_k(self.prompt)}/{_k(self.completion)} tok"
        return (f"{_k(self.requests)} req · tok {_k(self.prompt)} in ({_k(self.cached)} "
                f"cached) / {_k(self.completion)} out")

    def __enter__(self) -> RunProgress:
        if self._owned:
            self._progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._flush()
        if self._owned:
            self._progress.stop()

    def tokens(self, prompt: int, cached: int, completion: int) -> None:
        """Count one request's tokens as it finishes (multi-turn items move the bar too)."""
        self.requests += 1
        self.prompt += prompt
        self.cached += cached
        self.completion += completion
        self._dirty = True
        self._maybe_flush()

    def advance(self, error: bool) -> None:
        if error:
            self.errors += 1
        self._pending += 1
        self._maybe_flush()

    def _maybe_flush(self) -> None:
        now = time.monotonic()
        if now - self._last >= 0.05:  # the bar redraws 4x/s: no need to update per item
            self._last = now
            self._flush()
            if self._log_every is not None and now - self._last_line >= self._log_every:
                self._last_line = now
                self._log_line()

    def _log_line(self) -> None:
        # the numbers the bar would show
        task = next(t for t in self._progress.tasks if t.id == self._task)
        rate = _rate(task.completed - task.fields["resumed_at"], task.elapsed)
        self.console.print(
            f"{task.description}: {task.completed:g}/{task.total:g} items"
            + (f", {rate:,.2f} it/s" if rate else "") + f", {self._tokens()}"
            + (f", {self.errors} errors" if self.errors else ""),
            markup=False, highlight=False, soft_wrap=True)

    def _flush(self) -> None:
        if not self._pending and not self._dirty:
            return
        self._dirty = False
        self._progress.update(
            self._task,
            advance=self._pending,
            tokens=self._tokens(),
            errs=f"[red]{self.errors} errors" if self.errors else "",
        )
        self._pending = 0
