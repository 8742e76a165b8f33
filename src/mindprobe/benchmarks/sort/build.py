"""Book-SORT dataset creation (spec §3): the book × condition grid, files, and user texts.

The per-cell algorithm lives in :mod:`.cell` (re-exported here); this module runs the grid,
keeps going past cells whose uniformity gate fails (listing them with the seed override to
use), writes each condition as soon as its cells are done, and can use several processes —
cells are independent, each with its own seed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mindprobe.benchmarks.sort.cell import (
    CONDITIONS,
    EXCERPT_LENGTHS,
    EXTRA_EXCERPTS,
    N_EXCERPTS,
    SEED_OVERRIDES,
    SEGMENT_LENGTHS,
    CellFailed,
    CellProgress,
    CellResult,
    Progress,
    build_cell,
    cell_seed,
    default_seed,
    distance_bins,
    distance_edges,
    has_sentence_marker,
    sentence_markers,
    sentence_starts,
    wrap_excerpt,
    wrap_segment,
)
from mindprobe.benchmarks.sort.export import write_condition
from mindprobe.benchmarks.sort.preprocess import Book, preprocess_text
from mindprobe.core.process import usable_cpus
from mindprobe.errors import DataError, UsageError

__all__ = [
    "CONDITIONS", "EXCERPT_LENGTHS", "SEGMENT_LENGTHS", "SEED_OVERRIDES", "BuildSummary",
    "CellFailed", "CellFailure", "CellProgress", "CellResult", "build_booksort", "build_books",
    "build_cell", "build_from_text", "cell_seed", "default_seed", "default_workers",
    "distance_bins", "distance_edges", "has_sentence_marker", "parse_seed_override", "plan_cells", "search_seed",
    "sentence_markers", "sentence_starts", "wrap_excerpt", "wrap_segment",
]

Cell = tuple[Book, int, int]


@dataclass
class CellFailure:
    """A cell the build skipped; ``message`` names the cell and the override to try."""

    book_idx: int
    excerpt_length: int
    segment_length: int
    seed: int
    message: str


@dataclass
class BuildSummary:
    """What a build produced: cells per condition (unless written and dropped), failures."""

    cells: dict[tuple[int, int], list[CellResult]] = field(default_factory=dict)
    failures: list[CellFailure] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    n_cells: int = 0
    n_rows: int = 0
    seconds: float = 0.0


def plan_cells(books: Iterable[Book], conditions: Iterable[tuple[int, int]] = CONDITIONS
               ) -> list[Cell]:
    """The grid in output order (condition, then book); books shorter than L_E are skipped."""
    books = list(books)
    return [(b, le, ls) for le, ls in conditions for b in books if b.num_words >= le]


def parse_seed_override(text: str) -> tuple[tuple[int, int, int], int]:
    """``BOOK:LE:LS=SEED`` (CLI form) → ((book, L_E, L_S), seed)."""
    try:
        key, seed = text.split("=")
        book, le, ls = (int(x) for x in key.split(":"))
        return (book, le, ls), int(seed)
    except ValueError:
        raise UsageError(f"bad seed override {text!r}; expected BOOK:LE:LS=SEED, "
                         "e.g. 72600:250:50=8382") from None


# Worker-process state: books are sent once per worker, sentence markers computed once per book.
_WORKER_BOOKS: dict[int, Book] = {}
_WORKER_MARKERS: dict[int, np.ndarray] = {}


def _init_worker(books: list[Book]) -> None:
    _WORKER_BOOKS.clear()
    _WORKER_MARKERS.clear()
    _WORKER_BOOKS.update({b.book_idx: b for b in books})


def _run_cell(book_idx: int, le: int, ls: int, seed: int, options: dict[str, Any]
              ) -> CellResult | CellFailure:
    book = _WORKER_BOOKS[book_idx]
    if book_idx not in _WORKER_MARKERS:
        _WORKER_MARKERS[book_idx] = sentence_markers(book.words)
    try:
        return build_cell(book, le, ls, seed=seed, markers=_WORKER_MARKERS[book_idx],
                          **options)
    except CellFailed as exc:
        return CellFailure(book_idx, le, ls, seed, str(exc))


def _results(plan: Sequence[Cell], seeds: Sequence[int], options: dict[str, Any],
             workers: int, progress: Progress | None,
             on_cell: Callable[[Cell], None] | None) -> Iterator[CellResult | CellFailure]:
    """Cell outcomes in plan order, computed in this process or in a pool."""
    if workers <= 1:
        markers: dict[int, np.ndarray] = {}
        for (book, le, ls), seed in zip(plan, seeds, strict=True):
            if on_cell is not None:
                on_cell((book, le, ls))
            if id(book) not in markers:
                markers[id(book)] = sentence_markers(book.words)
            try:
                yield build_cell(book, le, ls, seed=seed, markers=markers[id(book)],
                                 progress=progress, **options)
            except CellFailed as exc:
                yield CellFailure(book.book_idx, le, ls, seed, str(exc))
        return
    books = list({id(b): b for b, _, _ in plan}.values())
    if len({b.book_idx for b in books}) != len(books):
        raise UsageError("books in a parallel build need distinct book_idx values")
    with ProcessPoolExecutor(workers, initializer=_init_worker, initargs=(books,)) as pool:
        futures: list[Future] = [pool.submit(_run_cell, b.book_idx, le, ls, seed, options)
                                 for (b, le, ls), seed in zip(plan, seeds, strict=True)]
        for (book, le, ls), future in zip(plan, futures, strict=True):
            if on_cell is not None:
                on_cell((book, le, ls))
            outcome = future.result()
            if progress is not None:
                stage = "failed" if isinstance(outcome, CellFailure) else "done"
                progress(CellProgress(book.book_idx, le, ls, stage, 1, 1))
            yield outcome


def build_books(books: Iterable[Book], conditions: Iterable[tuple[int, int]] = CONDITIONS, *,
                out_dir: str | Path | None = None, keep_cells: bool | None = None,
                seed_overrides: Mapping[tuple[int, int, int], int] | None = None,
                fast: bool = True, wrap: bool = True, n_excerpts: int = N_EXCERPTS,
                extra: int = EXTRA_EXCERPTS, workers: int = 1, csv: bool = True,
                parquet: bool = True, progress: Progress | None = None,
                on_cell: Callable[[Cell], None] | None = None) -> BuildSummary:
    """Build every cell of the grid; failed cells are listed in the summary, never raised.

    ``seed_overrides`` is merged over :data:`SEED_OVERRIDES`. With ``out_dir`` each condition
    is written as soon as its cells are done and then dropped from memory unless
    ``keep_cells``. ``workers`` > 1 uses processes; ``progress`` then gets one ``done``/``failed``
    tick per cell instead of per-draw ticks. ``on_cell`` is called before each cell's result.
    """
    overrides = {**SEED_OVERRIDES, **(seed_overrides or {})}
    plan = plan_cells(books, conditions)
    seeds = [cell_seed(b.book_idx, le, ls, overrides) for b, le, ls in plan]
    keep = out_dir is None if keep_cells is None else keep_cells
    options = {"fast": fast, "wrap": wrap, "n_excerpts": n_excerpts, "extra": extra}
    summary = BuildSummary()
    started = time.perf_counter()
    remaining: dict[tuple[int, int], int] = {}
    for _, le, ls in plan:
        remaining[(le, ls)] = remaining.get((le, ls), 0) + 1
    pending: dict[tuple[int, int], list[CellResult]] = {}
    results = _results(plan, seeds, options, workers, progress, on_cell)
    for (_, le, ls), outcome in zip(plan, results, strict=True):
        if isinstance(outcome, CellFailure):
            summary.failures.append(outcome)
        else:
            pending.setdefault((le, ls), []).append(outcome)
            summary.n_cells += 1
            summary.n_rows += len(outcome.segments)
        remaining[(le, ls)] -= 1
        if remaining[(le, ls)] == 0:
            done = pending.pop((le, ls), [])
            if out_dir is not None and done:
                summary.files += write_condition(out_dir, le, ls, done, n=n_excerpts, csv=csv,
                                                 parquet=parquet)
            if keep:
                summary.cells[(le, ls)] = done
    summary.seconds = time.perf_counter() - started
    return summary


def default_workers() -> int:
    """Processes a build uses: the CPUs, at most 4 (cells are independent)."""
    return min(4, usable_cpus())


def build_booksort(data_dir: str | Path, out_dir: str | Path, *,
                   conditions: Iterable[tuple[int, int]] = CONDITIONS,
                   book_ids: list[int] | None = None, workers: int | None = None,
                   **options: Any) -> BuildSummary:
    """Regenerate Book-SORT from the Gutenberg texts in ``data_dir`` into ``out_dir``.

    ``workers`` defaults to the number of CPUs (at most 4); other options as
    :func:`build_books`.
    """
    from mindprobe.benchmarks.sort.preprocess import load_books

    books = load_books(data_dir, book_ids)
    if workers is None:
        workers = default_workers()
    return build_books(books, conditions, out_dir=out_dir, workers=workers, **options)


def search_seed(book: Book, excerpt_length: int, segment_length: int, *,
                start: int | None = None, tries: int = 100, **options: Any
                ) -> tuple[int, CellResult]:
    """First seed from ``start`` (default: the cell's default seed + 1) that passes both gates.

    For new texts, or for a cell whose published seed is unknown: the rows will differ from
    any published version, so report the seed used.
    """
    first = (default_seed(book.book_idx, excerpt_length, segment_length) + 1
             if start is None else start)
    for seed in range(first, first + tries):
        try:
            return seed, build_cell(book, excerpt_length, segment_length, seed=seed, **options)
        except CellFailed:
            continue
    raise CellFailed(book.book_idx, excerpt_length, segment_length, first + tries - 1,
                     "seed search", f"no seed in [{first}, {first + tries}) passes the gates")


def default_lengths(num_words: int) -> tuple[list[int], list[int]]:
    """Excerpt/segment lengths for a user text: the standard ones that fit, else scaled down.

    An excerpt length is used when the text has at least twice as many words (so excerpts can
    start in many places); texts under 500 words get one excerpt length of about half the
    text, with a segment length small enough for the four distance bins.
    """
    excerpt = [le for le in EXCERPT_LENGTHS if 2 * le <= num_words]
    if excerpt:
        return excerpt, list(SEGMENT_LENGTHS)
    le = num_words // 2
    ls = max(1, min(20, le // 10))
    if le < 40:
        raise DataError(f"text has only {num_words} words; SORT needs at least 80 "
                        "(excerpts of 40+ words holding two segments)")
    return [le], [ls]


def build_from_text(text: str, title: str | None = None,
                    excerpt_lengths: Sequence[int] | None = None,
                    segment_lengths: Sequence[int] | None = None, seed: int = 0, *,
                    book_idx: int = 0, out_dir: str | Path | None = None,
                    **options: Any) -> BuildSummary:
    """SORT from any plain text: every excerpt × segment length pair, cell seed = seed+L_E+L_S.

    Lengths default via :func:`default_lengths`. A length the text cannot hold is a
    DataError naming the condition; a segment length too long for its excerpt a UsageError.
    """
    book = preprocess_text(text, title=title, book_idx=book_idx)
    auto_le, auto_ls = default_lengths(book.num_words)
    lengths = list(excerpt_lengths) if excerpt_lengths else auto_le
    segs = list(segment_lengths) if segment_lengths else auto_ls
    for le in lengths:
        if le >= len(book.words):
            raise DataError(f"text {book.book_title!r} has {len(book.words)} words, too short "
                            f"for excerpt length {le}")
        for ls in segs:
            edges = distance_edges(le, ls)
            if not all(a < b for a, b in zip(edges, edges[1:], strict=False)):
                raise UsageError(f"segment length {ls} is too long for excerpt length {le} "
                                 f"(distance bin edges {edges} must increase)")
    conditions = [(le, ls) for le in lengths for ls in segs]
    overrides = {(book_idx, le, ls): seed + le + ls for le, ls in conditions}
    options.setdefault("workers", 1)
    return build_books([book], conditions, out_dir=out_dir, seed_overrides=overrides,
                       **options)
