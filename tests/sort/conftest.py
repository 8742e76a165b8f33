"""SORT fixtures: the shared Book-SORT sources (skipped cleanly when absent), books loaded once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SORT_DATA = Path(os.environ.get("MINDPROBE_SHARED_DATA", REPO.parent / "shared" / "data")) / "sort"


@pytest.fixture(scope="session")
def sort_data() -> Path:
    """../shared/data/sort, or skip: the Gutenberg texts are not part of the repository."""
    if not (SORT_DATA / "booksort_preprocess.json").is_file():
        pytest.skip(f"Book-SORT sources not found at {SORT_DATA} (set MINDPROBE_SHARED_DATA)")
    return SORT_DATA


@pytest.fixture(scope="session")
def books(sort_data):
    """All nine cleaned books by PG id (verified against the JSON's hashes)."""
    from mindprobe.benchmarks.sort.preprocess import load_books

    return {b.book_idx: b for b in load_books(sort_data)}


@pytest.fixture(scope="session")
def cell_73017(books):
    """The smallest real cell (book 73017, L_E 250, L_S 20), built once."""
    from mindprobe.benchmarks.sort.cell import build_cell

    return build_cell(books[73017], 250, 20)
