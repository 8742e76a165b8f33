"""Where a SORT run's rows come from: published Book-SORT files, or the nine Gutenberg books
built into Book-SORT on the fly (the same algorithm as `mindprobe build sort`, cached)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from mindprobe.benchmarks.sort.preprocess import SOURCE_SHA256, load_books
from mindprobe.benchmarks.sort.upstream import DATA_FILES as UPSTREAM_FILES
from mindprobe.core.data import DataFile, data_dir_for
from mindprobe.core.paths import cache_dir
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


def built_folder(books: list[Any], conditions: list[tuple[int, int]]) -> Path:
    """Where the build of `conditions` from `books` is cached (built or not)."""
    key = hashlib.sha256(repr((sorted(b.book_idx for b in books),
                               [b.words_with_headings_sha256 for b in books],
                               sorted(conditions), "v1")).encode()).hexdigest()[:16]
    return cache_dir() / "sort-built" / key


def is_built(folder: Path) -> bool:
    from mindprobe.benchmarks.sort.data import find_files

    return folder.is_dir() and bool(find_files(folder)["parquet"]["test"])


def built_dir(root: Path, conditions: list[tuple[int, int]], book_ids: list[int] | None,
              books: list[Any] | None = None) -> Path:
    """Build the needed conditions from the books once (in worker processes, as `mindprobe
    build sort` does); later runs read the cached split."""
    from mindprobe.benchmarks.sort.build import build_books, default_workers

    books = load_source_books(root, book_ids) if books is None else books
    out = built_folder(books, conditions)
    if is_built(out):
        return out
    summary = build_books(books, conditions, out_dir=out, csv=False, parquet=True,
                          workers=default_workers())
    if not summary.n_rows:
        raise DataError(f"building Book-SORT from {root} produced no rows: "
                        + "; ".join(str(f) for f in summary.failures))
    return out
