"""Where a SORT run's rows come from: published Book-SORT files, or the nine Gutenberg books
built into Book-SORT on the fly (the same algorithm as `mindprobe build sort`, cached)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from mindprobe.benchmarks.sort.preprocess import SOURCE_SHA256, load_books
from mindprobe.benchmarks.sort.upstream import DATA_FILES as UPSTREAM_FILES
from mindprobe.core.data import DataFile, Grouped, data_dir_for
from mindprobe.core.decoded import is_memoised
from mindprobe.errors import DataError

GUTENBERG = "https://www.gutenberg.org/files/{id}/{id}-0.txt"
DATA_FILES = [DataFile(f"pg/full_text/{i}-0.txt", GUTENBERG.format(id=i), sha)
              for i, sha in SOURCE_SHA256.items()] + UPSTREAM_FILES


def books_root(data_dir: Path | None) -> Path:
    """A folder with pg/full_text/{id}-0.txt (and optionally booksort_preprocess.json)."""
    return data_dir_for("sort", data_dir)


def has_booksort_files(root: Path) -> bool:
    from mindprobe.benchmarks.sort.data import find_files

    if not root.is_dir():
        return False
    found = find_files(root)
    return bool(found["csv"]) or any(found["parquet"].values())


def load_source_books(root: Path, book_ids: list[int] | None) -> list[Any]:
    """The cleaned books (sha256-verified sources and results), with a fix when missing."""
    if not (root / "pg" / "full_text").is_dir():
        raise DataError(
            f"no Book-SORT files and no Gutenberg books under {root}; get the books with "
            "`mindprobe data fetch sort`, or pass --data-dir with the published Book-SORT files "
            "or a folder holding pg/full_text/ (e.g. ../shared/data/sort)")
    return load_books(root, book_ids)


def build_stamp(books: list[Any], conditions: list[tuple[int, int]]) -> str:
    """What identifies the build of `conditions` from `books` (their cleaned texts)."""
    return hashlib.sha256(repr((sorted(b.book_idx for b in books),
                                [b.words_with_headings_sha256 for b in books],
                                sorted(conditions), "v2")).encode()).hexdigest()


def is_built(books: list[Any], conditions: list[tuple[int, int]]) -> bool:
    """Whether a run already built these conditions from these books (their rows memoised)."""
    from mindprobe.benchmarks.sort.planned import BUILT_KIND

    return is_memoised(build_stamp(books, conditions), BUILT_KIND)


def built_rows(root: Path, conditions: list[tuple[int, int]], books: list[Any]) -> Grouped:
    """The rows (both splits) of `conditions` built from `books`, grouped by excerpt: built once
    in worker processes (as `mindprobe build sort` builds) straight into the data memo, which
    later plans read, a few excerpts at a time."""
    from mindprobe.benchmarks.sort.build import build_books, default_workers
    from mindprobe.benchmarks.sort.data import cell_rows
    from mindprobe.benchmarks.sort.planned import built_groups

    def build() -> list[dict[str, Any]]:
        summary = build_books(books, conditions, keep_cells=True, workers=default_workers())
        if not summary.n_rows:
            raise DataError(f"building Book-SORT from {root} produced no rows: "
                            + "; ".join(str(f) for f in summary.failures))
        return cell_rows(summary.cells)

    return built_groups(root, build_stamp(books, conditions), build)
