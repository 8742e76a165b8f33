"""`mindprobe report [RUN_DIR …]`: one self-contained HTML page (or Markdown / LaTeX tables)
for a set of runs, built by `mindprobe.report`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mindprobe.errors import UsageError

if TYPE_CHECKING:
    from rich.console import Console

FORMAT_HELP = "html: one self-contained page; md / latex: the tables only"


def add_report_parser(sub: Any) -> argparse.ArgumentParser:
    """The `report` subcommand and its arguments."""
    p = sub.add_parser(
        "report", help="one self-contained HTML report (or md / latex tables) for a set of runs",
        description="Write one self-contained HTML page for a set of runs: the cognitive "
        "profile of every model, each benchmark's tables and plots, paired comparisons, "
        "transcripts and provenance. It opens offline, loads nothing from the network and "
        "prints cleanly. With no RUN_DIR, every run under --runs-dir is included.")
    p.add_argument("runs", nargs="*", metavar="RUN_DIR",
                   help="run directories, or folders holding runs (default: all of --runs-dir)")
    p.add_argument("--runs-dir", default="runs",
                   help="where to look for runs when no RUN_DIR is given (default ./runs)")
    p.add_argument("--out", help="the file to write (default report.html, report.md or "
                   "report.tex by --format)")
    p.add_argument("--format", choices=["html", "md", "latex"], default=None,
                   help=FORMAT_HELP + " (default: from the --out extension, else html)")
    p.add_argument("--compare", nargs=2, metavar=("A", "B"),
                   help="compare two runs item by item: run directories or model labels "
                   "(default: every two runs of one benchmark and variant that share items)")
    p.add_argument("--price", metavar="IN,OUT",
                   help="USD per million prompt,completion tokens, to show what each run cost")
    p.add_argument("--max-items", type=int, metavar="N",
                   help="transcripts shown per run (default 300)")
    p.add_argument("--title", help="the page title (default 'mindprobe report')")
    p.add_argument("--data-dir", metavar="DIR", help="the data the runs are scored against: "
                   "a benchmark's folder or the data root (one folder per benchmark, as "
                   "shared/data); default: the folder each run read, as it recorded")
    p.add_argument("--references", action="append", default=[], metavar="DIR",
                   help="a folder of published results to show beside your models, labelled "
                   "'published' (e.g. an upstream test-set folder with its released results "
                   "files; repeatable). The data folders your runs read are searched too")
    return p


def _out_path(args: argparse.Namespace) -> Path:
    from mindprobe.core.files import check_target
    from mindprobe.core.paths import check_parent
    from mindprobe.report import EXTENSIONS

    by_ext = {ext: fmt for fmt, ext in EXTENSIONS.items()}
    suffix = Path(args.out).suffix.lower() if args.out else ""
    if args.format is None:
        args.format = by_ext.get(suffix, "html")
    elif suffix in by_ext and by_ext[suffix] != args.format:
        raise UsageError(f"--out {args.out} names a {by_ext[suffix]} file but --format is "
                         f"{args.format}; make them agree")
    out = Path(args.out) if args.out else Path("report" + EXTENSIONS[args.format])
    if out.is_dir():
        raise UsageError(f"--out {out} is a directory; give a file name, e.g. {out}/report"
                         f"{EXTENSIONS[args.format]}")
    check_parent(out, "--out")
    check_target(out, replace=True, flag="--out")  # before the report is built
    return out


def cmd_report(args: argparse.Namespace, err: Console) -> int:
    from mindprobe.core.files import write_file
    from mindprobe.report import build_report

    out = _out_path(args)

    from rich.markup import escape

    def warn(message: str) -> None:
        err.print(f"[yellow]warning[/yellow]: {escape(message)}", highlight=False)

    text = build_report(args.runs, runs_dir=args.runs_dir, fmt=args.format,
                        compare=args.compare, price=args.price, max_items=args.max_items,
                        title=args.title, references=args.references,
                        data_dir=args.data_dir, warn=warn)
    # a report is a view of the runs, regenerated: replacing it is its documented behaviour
    write_file(out, text, replace=True, flag="--out")
    size = len(text.encode("utf-8"))
    err.print(f"wrote {out} ({size / 1024:,.0f} KiB)", highlight=False)
    return 0
