"""What the run commands print besides tables and JSON (`mindprobe.core.output`): the dry run's
spread of items over endpoints, and the summary box of a run."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from mindprobe.engine.summary import print_endpoints, print_summary

__all__ = ["print_dry_run", "print_endpoints", "print_summary"]


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
