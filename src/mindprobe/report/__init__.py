"""The report: one self-contained HTML page (or Markdown / LaTeX tables) for a set of runs.

It renders each run's Results (what `mindprobe analyse` prints) with plots, a cognitive profile
across models and benchmarks, paired comparisons, transcripts and provenance; it computes no
benchmark metric itself and knows benchmarks only through the registry and their Results.

    from mindprobe.report import build_report
    text = build_report(["runs"], fmt="html")
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mindprobe.core.results import Results
    from mindprobe.report.collect import NotRun

FORMATS = ("html", "md", "latex")
EXTENSIONS = {"html": ".html", "md": ".md", "latex": ".tex"}


def build_report(paths: Iterable[str | Path] = (), *, runs_dir: str | Path | None = "runs",
                 fmt: str = "html", compare: Sequence[str] | None = None,
                 price: str | None = None, max_items: int | None = None,
                 extra: dict[str, Results] | None = None, title: str | None = None,
                 references: Sequence[str | Path] = (), data_dir: str | Path | None = None,
                 warn: Callable[[str], None] = lambda message: None,
                 not_run: dict[str, NotRun] | None = None) -> str:
    """The report of the runs in `paths` (run directories, or folders holding runs; none:
    every run under `runs_dir`) as text in `fmt` ("html", "md" or "latex").

    `compare` = (A, B), run directories or model labels, picks the paired comparisons (default:
    runs of one benchmark and variant that share items); `price` = "IN,OUT" USD per million
    tokens adds costs; `extra` adds Results that come from no run (e.g. a paper's tables);
    `references` are folders holding published results (e.g. an upstream test set with its
    released results files): their models appear as labelled "published" rows and their tables as
    sections (the data folders of the runs are searched for published results too).
    `data_dir` (a benchmark's folder or the data root) is the data the runs are scored against
    (default: the folder each run read, as it recorded). `not_run`: the benchmarks a profile
    planned that did not run, listed with their reason, fix and published rows.
    """
    from mindprobe.errors import UsageError
    from mindprobe.report.collect import collect, find_run_dirs
    from mindprobe.report.compare import comparisons
    from mindprobe.report.local_paths import prefixes, scrub
    from mindprobe.report.provenance import parse_price
    from mindprobe.report.transcripts import MAX_ITEMS

    if fmt not in FORMATS:
        raise UsageError(f"unknown report format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if compare is not None and len(compare) != 2:
        raise UsageError("--compare takes exactly two runs or model labels: A B")
    if max_items is not None and max_items < 0:
        raise UsageError(f"--max-items must be 0 or more, got {max_items}")
    unit_price = parse_price(price)
    paths = list(paths)
    ref_dirs = [Path(r) for r in references]
    for r in ref_dirs:
        if not r.is_dir():
            raise UsageError(f"--references {r}: no such folder")
    if (extra or ref_dirs) and not paths and not Path(runs_dir or "runs").is_dir():
        dirs: list[Path] = []  # the upstream test set alone is a report too
    else:
        dirs = find_run_dirs(paths, runs_dir)
    for spec in compare or ():  # a compared run directory is part of the report
        p = Path(spec)
        if (p / "manifest.json").is_file() and p.resolve() not in {d.resolve() for d in dirs}:
            dirs.append(p)
    if data_dir is not None and not Path(data_dir).expanduser().is_dir():
        raise UsageError(f"--data-dir {data_dir}: no such folder")
    data = collect(dirs, warn=warn, extra=extra, title=title, reference_dirs=ref_dirs,
                   data_dir=data_dir, not_run=not_run)
    cmps, how, left_out = comparisons(data, tuple(compare) if compare else None)
    local = prefixes([e.run.dir for e in data.entries], [e.run.manifest for e in data.entries],
                     ref_dirs)
    if fmt == "md":
        from mindprobe.report.formats import render_markdown

        return scrub(render_markdown(data, cmps, left_out), local)
    if fmt == "latex":
        from mindprobe.report.formats import render_latex

        return scrub(render_latex(data, cmps, left_out), local)
    from html import escape

    from mindprobe.report.html import render_html

    # a page shows `<data cache>` as text: escaped, never read as a tag
    return scrub(render_html(data, cmps, how, unit_price,
                             MAX_ITEMS if max_items is None else max_items, left_out),
                 [(escape(p), escape(s)) for p, s in local])


__all__ = ["EXTENSIONS", "FORMATS", "build_report"]
