"""`mindprobe published [BENCH] [--json]`: the published results each benchmark reads from
upstream's pinned files (a README's table, a leaderboard's submissions, released responses),
every number as upstream prints it, with what it was measured on and where it comes from.
The same text makes the manual's page (docs/published.md, `published_markdown`)."""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path
from typing import Any

from rich.console import Console

from mindprobe.core.data import benchmark_folder, data_dir_for, fetchable
from mindprobe.core.output import emit_json
from mindprobe.core.paths import data_root
from mindprobe.core.published import PublishedRow, by_setting, fit_tables
from mindprobe.errors import DataError, UsageError
from mindprobe.registry import BENCHMARKS, get_benchmark, info

WIDTH = 80


def collect(names: list[str], data_dir: Path | None, warn: Any = lambda m: None
            ) -> dict[str, dict[str, Any]]:
    """name -> {"rows": [PublishedRow], "note": why none, "error": what is missing}; a
    missing file is an error of that benchmark only (raised when it is the only one)."""
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        bench = get_benchmark(name)
        folder = benchmark_folder(name, data_dir, bench.data_files)  # its folder, or the root
        root = data_dir_for(name, folder)
        entry: dict[str, Any] = {"rows": [], "note": bench.published_note, "error": None}
        try:
            entry["rows"] = bench.published([folder], warn)
        except DataError as exc:
            if len(names) == 1:
                raise
            entry["error"] = str(exc)
        if not entry["rows"] and not entry["note"] and not entry["error"]:
            if not fetchable(bench.data_files):  # nothing to fetch: it publishes no results
                entry["note"] = "none: it declares no published results"
                out[name] = entry
                continue
            entry["error"] = (f"no published results found in {root}: `mindprobe data fetch "
                              f"{name}` fetches them, or --data-dir DIR names a folder "
                              "that holds them")
            if len(names) == 1:
                raise DataError(entry["error"])
        out[name] = entry
    return out


def _wrap(text: str, indent: str = "") -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent + "  ",
                         break_on_hyphens=False, break_long_words=True) or [""]


def sources_text(rows: list[PublishedRow]) -> str:
    """The sources, the shared `owner/repo@commit:folder/` said once."""
    sources = list(dict.fromkeys(r.source for r in rows))
    if len(sources) == 1:
        return sources[0]
    head = sources[0].rsplit("/", 1)[0] + "/"
    if all(s.startswith(head) for s in sources):
        return head + "{" + ", ".join(s[len(head):] for s in sources) + "}"
    return ", ".join(sources)


def setting_lines(rows: list[PublishedRow]) -> list[str]:
    """What one setting's rows were measured on and how they read (wrapped to WIDTH)."""
    r0 = rows[0]
    by_judge: dict[str, list[str]] = {}
    for r in rows:
        if r.judge and r.metric not in by_judge.setdefault(r.judge, []):
            by_judge[r.judge].append(r.metric)
    judges = [f"{j} ({', '.join(ms)})" for j, ms in by_judge.items()]
    lines = _wrap(f"data: {r0.data_label or f'{r0.split} split, {r0.release}'}"
                  + (f"; n={r0.n:,}" if r0.n else ""))
    if judges:
        lines += _wrap("judge: " + "; ".join(judges))
    if any(len(r.value) > 6 for r in rows):
        lines += _wrap("long values are shown rounded (percent: ×100, one decimal); `--json` "
                       + ("gives the exact values" if r0.computed else
                          "gives every number exactly as upstream prints it"))
    if r0.computed:
        lines += _wrap("computed by mindprobe's analysis from upstream's released responses "
                       "(not a number upstream prints)")
    lines += _wrap("source: " + sources_text(rows))
    return lines


def definition_lines(rows: list[PublishedRow]) -> list[str]:
    defs = {(r.label or r.metric): r.definition for r in rows}
    out: list[str] = []
    for k, v in defs.items():
        if v and v != k:
            out += _wrap(f"{k}: {v}", "  ")
    return out


def bench_text(name: str, entry: dict[str, Any]) -> list[str]:
    """One benchmark's section as plain text lines (each at most WIDTH columns)."""
    lines = [f"{name}: published results", "=" * len(f"{name}: published results")]
    if entry.get("error"):
        return lines + _wrap(f"not available: {entry['error']}") + [""]
    if not entry["rows"]:
        return lines + _wrap(entry.get("note") or "none") + [""]
    for setting, rows in by_setting(entry["rows"]).items():
        lines += ["", f"published rows with {setting}"]
        lines += setting_lines(rows)
        for table in fit_tables(rows, WIDTH):
            lines += [""] + table.splitlines()
    lines += ["", "metrics:"] + definition_lines(entry["rows"]) + [""]
    return lines


def cmd_published(args: argparse.Namespace, err: Console) -> int:
    names = [info(args.benchmark).name] if args.benchmark else list(BENCHMARKS)
    data_dir = Path(args.data_dir).expanduser() if args.data_dir else None
    if data_dir is not None and not data_dir.is_dir():
        raise UsageError(f"--data-dir {data_dir}: no such folder")
    doc = collect(names, data_dir, lambda m: err.print(f"[yellow]warning:[/yellow] {m}"))
    missing = [n for n, e in doc.items() if e["error"]]
    if missing and not any(e["rows"] for e in doc.values()):
        looked = data_dir or data_root()
        raise DataError(f"no published results found in {looked}: `mindprobe data fetch "
                        f"{' '.join(missing)}` fetches them (needs internet), or --data-dir "
                        "DIR names a folder that holds them (a benchmark's folder, or the data "
                        "root with one folder per benchmark, as shared/data)")
    if args.json:
        emit_json(True, {name: {"rows": [r.as_json() for r in e["rows"]], "note": e["note"]
                                or None, "error": e["error"]} for name, e in doc.items()})
        return 0
    import sys

    for name, entry in doc.items():
        sys.stdout.write("\n".join(bench_text(name, entry)) + "\n")
    return 0


def published_markdown(data_root: Path | None = None) -> str:
    """The manual's page of published results (docs/published.md), from the same rows."""
    names = list(BENCHMARKS)
    doc = collect(names, data_root)
    out = ["# Published results", "",
           "Generated by `python -m mindprobe.commands.published` from upstream's pinned files "
           "(`mindprobe data fetch BENCH`); `mindprobe published [BENCH] [--json]` prints the "
           "same rows. A report places a row beside a run only where the setting matches "
           "(the same number of shots, the same closed-book or open-book setting), "
           "labels it when its data differs, and never pairs it with the run item by item.", ""]
    for name, entry in doc.items():
        out += ["```text", *bench_text(name, entry), "```", ""]
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":  # regenerate docs/published.md
    import sys

    root = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    target = Path(__file__).resolve().parents[3] / "docs" / "published.md"
    from mindprobe.core.files import write_file

    write_file(target, published_markdown(root), replace=True)
    print(f"wrote {target}")
