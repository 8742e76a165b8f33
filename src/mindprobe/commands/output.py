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
                  elapsed: float, endpoints: list[dict[str, Any]] | None = None,
                  usage: dict[str, int] | None = None) -> None:
    u = usage if usage is not None else usage_summary(records)
    t = Table(title="run", show_header=False, title_justify="left")
    t.add_column(no_wrap=True)
    t.add_column(overflow="fold")
    t.add_row("items", f"{len(records)} / {result.n_items} ({result.n_new} new, {elapsed:.1f} s)")
    t.add_row("errors", f"[red]{u['errors']}[/red]" if u["errors"] else "0")
    t.add_row("requests", f"{u['requests']} (+{u['cache_hits']} from cache)")
    t.add_row(
        "tokens",
        f"prompt {u['prompt_tokens']:,} (cached {u['cached_prompt_tokens']:,}) · "
        f"completion {u['completion_tokens']:,}",
    )
    err.print(t)
    # below the box, on one line of its own: a table would fold the path mid-name
    err.print(f"directory: {shlex.quote(str(run_dir))}", soft_wrap=True, highlight=False,
              markup=False)
    if endpoints:
        print_endpoints(err, endpoints)
    if u["errors"]:
        first = next(r for r in records if "error" in r)
        err.print(
            f"[red]{u['errors']} item(s) ended in errors[/red], e.g. {first['id']}: "
            f"{first['error']}\nRe-run the same command with --retry-errors to try them again.",
            highlight=False,
        )


def print_endpoints(err: Console, endpoints: list[dict[str, Any]]) -> None:
    """Per-endpoint lines of a run served by several endpoints (requests, errors, throughput)."""
    from rich import box

    t = Table(title="endpoints", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False,
              collapse_padding=True)
    width = max(len(_short(e["endpoint"])) for e in endpoints)
    t.add_column("endpoint", no_wrap=True, min_width=min(width, 40), overflow="fold")
    t.add_column("state", no_wrap=True)
    for col in ("items", "requests", "errors", "req/s", "prompt tok", "cached"):
        t.add_column(col, justify="right", no_wrap=True)
    for e in endpoints:
        state = e["state"] if e["state"] == "up" else f"[red]{e['state']}[/red]"
        if e.get("downs"):
            state += f" {e['downs']}x"
        t.add_row(_short(e["endpoint"]), state, f"{e['items']:,}", f"{e['requests']:,}",
                  f"[red]{e['errors']:,}[/red]" if e["errors"] else "0",
                  f"{e['requests_per_s']:,.1f}", f"{e['prompt_tokens']:,}",
                  f"{e['cached_prompt_tokens']:,}")
    err.print(t)
    for e in endpoints:
        if e.get("last_error"):
            err.print(f"  {_short(e['endpoint'])}: last error: {e['last_error']}",
                      markup=False, highlight=False)


def _short(url: str) -> str:
    return url.removeprefix("http://").removesuffix("/v1")


def print_dry_run(err: Console, variant: str, n_items: int, requests: int, bound: str,
                  tokens: dict[str, int] | None, rows: list[dict[str, Any]],
                  concurrency: int) -> None:
    """What `run --dry-run` shows: the spread of items over endpoints and the expected load."""
    t = Table(title=f"dry run of {variant}: {n_items:,} items, "
              f"{bound} {requests:,} requests, {concurrency} in flight "
              "(nothing sent)", title_justify="left")
    cols = ["endpoint", "concurrency", "items", "requests"]
    if tokens:
        cols += [k.replace("_", " ") for k in tokens]
    for col in cols:
        t.add_column(col, justify="left" if col == "endpoint" else "right", overflow="fold")
    for r in rows:
        cells = [r["endpoint"], str(r["concurrency"] or "-"), f"{r['items']:,}",
                 f"{r['requests']:,}"]
        cells += [f"{r.get(k, 0):,}" for k in tokens or {}]
        t.add_row(*cells)
    err.print(t)
    if tokens:
        err.print("tokens: the benchmark's estimate (an upper bound), spread like the items",
                  highlight=False)


def report_interrupt(err: Console, run_dirs: list[Path], planning: bool) -> None:
    """Ctrl-C or SIGTERM at any moment (loading data, starting the model, mid-run): every run
    of this command is left `interrupted` (not `running`) and the resume line is printed."""
    from mindprobe.core.store import settle_interrupted

    lines = []
    for run_dir in run_dirs:
        n = settle_interrupted(run_dir)
        lines.append(f"{run_dir}: nothing recorded yet" if n is None
                     else f"{n} item(s) recorded in {run_dir}")
    if planning:
        lines.append("interrupted while loading the data: nothing was started")
    err.print("\n[yellow]Interrupted[/yellow]: " + "; ".join(lines) + ".\nResume with: "
              f"[bold]mindprobe {shlex.join(sys.argv[1:])}[/bold]", soft_wrap=True)
