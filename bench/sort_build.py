"""Book-SORT build speed: straightforward vs fast cells (identical output), then the full grid.

Prints per-cell times and the fast/straightforward ratio with an identity check, then the
full 86-cell fast build in one process and with --workers processes (digests compared). Add
--full-plain to time the whole straightforward build too (and compare every cell), --out DIR
to also write the CSV + Parquet files.

    python bench/sort_build.py [--data ../shared/data/sort] [--workers 2] [--cells-only]
                               [--full-plain] [--out DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

from mindprobe.benchmarks.sort.build import build_books, build_cell
from mindprobe.benchmarks.sort.cell import CellFailed, CellResult
from mindprobe.benchmarks.sort.preprocess import load_books

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "sort"
SAMPLE_CELLS = [(73017, 250, 20), (73017, 250, 50), (69087, 250, 20), (72600, 250, 50),
                (72958, 2500, 20), (73042, 20000, 50)]


def digest(cell: CellResult) -> str:
    """Content hash of a cell's rows (what identical output means here)."""
    blob = json.dumps([cell.seed, cell.excerpts, cell.segments], sort_keys=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def _timed_cell(book, le, ls, fast: bool) -> tuple[float, str]:
    """CPU seconds of this process (robust to other load on the machine) and the digest."""
    start = time.process_time()
    try:
        outcome = digest(build_cell(book, le, ls, fast=fast))
    except CellFailed as exc:
        outcome = f"failed ({exc.stage})"
    return time.process_time() - start, outcome


def compare_cells(books) -> bool:
    print("per cell, CPU seconds:")
    print(f"{'cell':<18}{'plain s':>9}{'fast s':>9}{'ratio':>8}  identical")
    total_plain = total_fast = 0.0
    same_all = True
    for book_idx, le, ls in SAMPLE_CELLS:
        book = books[book_idx]
        t_plain, d_plain = _timed_cell(book, le, ls, fast=False)
        t_fast, d_fast = _timed_cell(book, le, ls, fast=True)
        total_plain, total_fast = total_plain + t_plain, total_fast + t_fast
        same = d_plain == d_fast
        same_all &= same
        print(f"{book_idx}·{le}·{ls:<6}{t_plain:>9.3f}{t_fast:>9.3f}{t_plain / t_fast:>8.1f}"
              f"  {'yes' if same else 'NO'} {d_fast}")
    print(f"{'sample total':<18}{total_plain:>9.3f}{total_fast:>9.3f}"
          f"{total_plain / total_fast:>8.1f}  {'all identical' if same_all else 'MISMATCH'}")
    return same_all


def full_build(books, *, fast: bool, workers: int, out: Path | None) -> tuple[float, dict]:
    cpu = time.process_time()
    summary = build_books(books, fast=fast, workers=workers, out_dir=out, keep_cells=True)
    cpu = time.process_time() - cpu
    digests = {(c.book_idx, c.excerpt_length, c.segment_length): digest(c)
               for cells in summary.cells.values() for c in cells}
    label = f"{'fast' if fast else 'plain'}, {workers} process{'es' if workers > 1 else ''}"
    cpu_note = f" ({cpu:.1f} s CPU)" if workers == 1 else ""
    print(f"full build ({label}): {summary.seconds:.1f} s wall{cpu_note}, "
          f"{summary.n_cells} cells built, "
          f"{summary.n_rows} rows, {len(summary.failures)} failed, {len(summary.files)} files")
    return summary.seconds, digests | {("failed",): sorted(
        (f.book_idx, f.excerpt_length, f.segment_length) for f in summary.failures)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--workers", type=int, default=max(1, min(4, os.cpu_count() or 1)))
    parser.add_argument("--cells-only", action="store_true")
    parser.add_argument("--full-plain", action="store_true")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    import scipy.stats  # noqa: F401  (imported lazily by the build; keep it out of timings)

    start = time.perf_counter()
    books = {b.book_idx: b for b in load_books(args.data)}
    print(f"preprocessing 9 books (verified): {time.perf_counter() - start:.2f} s; "
          f"{os.cpu_count()} CPUs")
    ok = compare_cells(books)
    if args.cells_only:
        return 0 if ok else 1
    grid = list(books.values())
    t_serial, serial = full_build(grid, fast=True, workers=1, out=None)
    if args.workers > 1:
        t_par, parallel = full_build(grid, fast=True, workers=args.workers, out=args.out)
        same = parallel == serial
        ok &= same
        print(f"  parallel speed-up {t_serial / t_par:.2f}x; output "
              f"{'identical' if same else 'DIFFERS'} to the serial build")
    elif args.out is not None:
        full_build(grid, fast=True, workers=1, out=args.out)
    print(f"  failed cells: {serial[('failed',)]}")
    if args.full_plain:
        t_plain, plain = full_build(grid, fast=False, workers=1, out=None)
        same = plain == serial
        ok &= same
        print(f"  straightforward/fast (1 process): {t_plain / t_serial:.2f}x; output "
              f"{'identical' if same else 'DIFFERS'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
