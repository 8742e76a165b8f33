"""Where a command's output goes: tables on stdout (stderr under --json, so stdout holds only
the one JSON document). Used by the CLI's commands and by the benchmarks' own verbs."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console


def tables_console(to_stderr: bool = False) -> Console:
    """Wide when not a terminal (logs, pipes), so tables do not wrap."""
    probe = Console(stderr=to_stderr)
    return Console(stderr=to_stderr, width=None if probe.is_terminal else 160)


def emit_json(enabled: bool, doc: Any) -> None:
    """The one JSON document of a command (NaN is not JSON: it must already be null)."""
    if enabled:
        sys.stdout.write(json.dumps(doc, indent=2, allow_nan=False, default=str) + "\n")
