"""Where tables go: stdout (stderr under --json), wide when not a terminal (logs, pipes)."""

from __future__ import annotations

from rich.console import Console


def tables_console(to_stderr: bool = False) -> Console:
    probe = Console(stderr=to_stderr)
    return Console(stderr=to_stderr, width=None if probe.is_terminal else 160)
