"""Where output goes: tables on stdout (stderr under --json), one JSON document on stdout, and
the summary box of a run."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from mindprobe.core.runner import RunResult, usage_summary


def tables_console(to_stderr: bool = False) -> Console:
    """Wide when not a terminal (logs, pipes), so tables do not wrap."""
    probe = Console(stderr=to_stderr)
    return Console(stderr=to_stderr, width=None if probe.is_terminal else 160)


def emit_json(enabled: bool, doc: Any) -> None:
    """The one JSON document of a command (NaN is not JSON: it must already be null)."""
    if enabled:
        sys.stdout.write(json.dumps(doc, indent=2, allow_nan=False, default=str) + "\n")


def print_summary(err: Console, run_dir: Path, result: RunResult, records: list[dict],
                  elapsed: float) -> None:
    u = usage_summary(records)
    t = Table(title="run", show_header=False, title_justify="left")
    t.add_row("directory", shlex.quote(str(run_dir)))
    t.add_row("items", f"{len(records)} / {result.n_items} ({result.n_new} new, {elapsed:.1f} s)")
    t.add_row("errors", f"[red]{u['errors']}[/red]" if u["errors"] else "0")
    t.add_row("requests", f"{u['requests']} (+{u['cache_hits']} from cache)")
    t.add_row(
        "tokens",
        f"prompt {u['prompt_tokens']:,} (cached {u['cached_prompt_tokens']:,}) · "
        f"completion {u['completion_tokens']:,}",
    )
    err.print(t)
    if u["errors"]:
        first = next(r for r in records if "error" in r)
        err.print(
            f"[red]{u['errors']} item(s) ended in errors[/red], e.g. {first['id']}: "
            f"{first['error']}\nRe-run the same command with --retry-errors to try them again.",
            highlight=False,
        )
