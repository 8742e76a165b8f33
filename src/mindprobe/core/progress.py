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
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text


class RateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:,.1f} it/s" if speed else "– it/s", style="progress.data.speed")


def _k(n: int) -> str:
    return f"{n / 1e6:.2f}M" if n >= 1e6 else f"{n / 1e3:.1f}k" if n >= 1e4 else str(n)


class RunProgress:
    """Thin wrapper so the runner calls one cheap method per finished item."""

    def __init__(self, console: Console, description: str, total: int, done: int) -> None:
        self.console = console
        self.prompt = self.cached = self.completion = self.errors = 0
        self._pending = 0
        self._dirty = False
        self._last = 0.0
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(bar_width=None),
            MofNCompleteColumn(),
            RateColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[tokens]}"),
            TextColumn("{task.fields[errs]}"),
            console=console,
            disable=not console.is_terminal,
            refresh_per_second=4,
            transient=False,
        )
        self._task = self._progress.add_task(
            description, total=total, completed=done, tokens=self._tokens(), errs=""
        )

    def _tokens(self) -> str:
        return f"tok {_k(self.prompt)} in ({_k(self.cached)} cached) / {_k(self.completion)} out"

    def __enter__(self) -> RunProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._flush()
        self._progress.stop()

    def tokens(self, prompt: int, cached: int, completion: int) -> None:
        """Count one request's tokens as it finishes (multi-turn items move the bar too)."""
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
