"""Where a command's output goes: tables on stdout (stderr under --json, so stdout holds only
the one JSON document). Used by the CLI's commands and by the benchmarks' own verbs."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from rich.console import Console

if TYPE_CHECKING:
    from mindprobe.core.results import Results
    from mindprobe.core.store import Run


def tables_console(to_stderr: bool = False) -> Console:
    """Wide when not a terminal (logs, pipes), so tables do not wrap; a width the user set
    (COLUMNS) is kept."""
    import os

    probe = Console(stderr=to_stderr)
    wide = probe.is_terminal or os.environ.get("COLUMNS", "").strip().isdigit()
    return Console(stderr=to_stderr, width=None if wide else 160)


def emit_json(enabled: bool, doc: Any) -> None:
    """The one JSON document of a command (NaN is not JSON: it must already be null)."""
    if enabled:
        sys.stdout.write(json.dumps(doc, indent=2, allow_nan=False, default=str) + "\n")


def show_run(out: Console, path: str | Any, run: Run, res: Results) -> dict[str, Any]:
    """A stored run's results under its path and state (`finished 310/310`), as every
    `analyse` shows them; returns its JSON document (the state and counts included)."""
    from rich.markup import escape

    from mindprobe.core.results import render_results
    from mindprobe.core.run_state import document

    out.print(f"[bold]{escape(str(path))}[/bold] ({run.state.text()})", highlight=False)
    render_results(res, out)
    return {"run": str(path), "variant": run.variant, **res.to_json(), **document(run.state)}
