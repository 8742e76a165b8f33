"""What the run commands print besides tables and JSON (`mindprobe.core.output`): the dry run's
spread of items over endpoints, and the summary box of a run."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from mindprobe.engine.summary import print_endpoints, print_summary

__all__ = ["print_dry_run", "print_endpoints", "print_summary"]


def print_dry_run(err: Console, variant: str, n_items: int, requests: int, bound: str,
                  tokens: dict[str, int] | None, rows: list[dict[str, Any]],
                  concurrency: int, precision: str | None = None) -> None:
    """What `run --dry-run` shows: the spread of items over endpoints, the expected load and
    the half-width the headline's interval will have (`precision`)."""
    from mindprobe.core.terminal import print_lines, print_table

    cols = ["endpoint", "concurrency", "items", "requests"]
    if tokens:
        cols += [k.replace("_", " ") for k in tokens]
    cells = []
    for r in rows:
        cells.append([r["endpoint"], str(r["concurrency"] or "-"), f"{r['items']:,}",
                      f"{r['requests']:,}", *(f"{r.get(k, 0):,}" for k in tokens or {})])
    print_table(err, f"dry run of {variant}: {n_items:,} items, {bound} {requests:,} "
                f"requests, {concurrency} in flight (nothing sent)", cols, cells,
                [c != "endpoint" for c in cols])
    lines = ["tokens: the benchmark's estimate (an upper bound), spread like the items"] \
        if tokens else []
    if precision:
        lines.append(f"±95% stated: {precision}")
    print_lines(err, lines)
