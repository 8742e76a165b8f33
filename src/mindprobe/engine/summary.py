"""The summary box of a finished run (items, errors, requests, tokens, where it lies) and the
per-endpoint lines of a run served by several endpoints."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from mindprobe.core.runner import RunResult, usage_summary


def print_summary(err: Console, run_dir: Path, result: RunResult, records: list[dict],
                  elapsed: float, endpoints: list[dict[str, Any]] | None = None,
                  usage: dict[str, int] | None = None) -> None:
    u = usage if usage is not None else usage_summary(records)
    t = Table(title="run", show_header=False, title_justify="left")
    t.add_column(no_wrap=True)
    t.add_column(overflow="fold")
    t.add_row("items", f"{len(records)} / {result.n_items} ({result.n_new} new, {elapsed:.1f} s)")
    t.add_row("errors", f"[red]{u['errors']}[/red]" if u["errors"] else "0")
    if u.get("does_not_fit") or u.get("ended_by_context_window"):
        t.add_row("does not fit", "; ".join(part for part in (
            f"{u['does_not_fit']} items not sent, not scored" if u.get("does_not_fit") else "",
            f"{u['ended_by_context_window']} ended where the next request did not fit"
            if u.get("ended_by_context_window") else "") if part) + " (the context window)")
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
