"""A dry run's SORT rows when Book-SORT is not built yet: planned from the books, not built.

Building the grid from the nine Gutenberg books takes about 40 s of CPU (the legacy RNG's
replay is what makes it bit-exact), too long for a plan that only counts and estimates. The
build's outcome is known without running it: every cell of `plan_cells` but the ones in
`BUILD_FAILURES` (a fact of the pinned books), each with 100 test and 10 validation excerpts
of four segment pairs, their row ids as the build names them. So a dry run gets exactly the
items a run would ask, in the same order, and prompts whose lengths are the real ones: each
excerpt is L_E of the book's own words, each segment L_S (the positions differ from the build's
random ones, so the tokens are estimates; the plan says so).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mindprobe.benchmarks.sort.cell import (
    BUILD_FAILURES,
    N_EXCERPTS,
    distance_bins,
    wrap_excerpt,
    wrap_segment,
)
from mindprobe.benchmarks.sort.export import TEST_EXCERPTS
from mindprobe.benchmarks.sort.preprocess import PREPROCESS_JSON, Book
from mindprobe.core.data import Grouped

#: What a dry run's notes say when SORT's numbers are estimated (measured with
#: `bench/sort_plan.py`: a first run's build of the whole grid, 86 cells, and its row memo
#: take 36-42 s of CPU; `docs/performance.md`).
ESTIMATED_NOTE = ("Book-SORT is not built yet: SORT's items are counted and its tokens "
                  "estimated from the books (excerpts of their own words); the first run builds "
                  "it (the whole grid: about 40 s of CPU, spread over up to 4 processes) and "
                  "states exact numbers")
#: The dry run's numbers that are estimates: the items, their order and the requests are the
#: build's, the texts only as long as its (`tests/sort/test_sort_estimated.py`).
ESTIMATED_NUMBERS = ("prompt_tokens", "prefill_tokens")

_SPLITS = {"test": [range(0, TEST_EXCERPTS)],
           "validation": [range(TEST_EXCERPTS, N_EXCERPTS)],
           "all": [range(0, TEST_EXCERPTS), range(TEST_EXCERPTS, N_EXCERPTS)]}


def pinned(books: Sequence[Book]) -> bool:
    """True when every book is the pinned text `BUILD_FAILURES` was computed on (a data
    folder's own booksort_preprocess.json may clean the books otherwise)."""
    shipped = json.loads(Path(__file__).with_name(PREPROCESS_JSON).read_text(encoding="utf-8"))
    expect = {int(b["book_idx"]): b.get("expect", {}) for b in shipped["books"]}
    for book in books:
        exp = expect.get(book.book_idx)
        if exp is None or exp.get("sha256_words_joined") != book.words_with_headings_sha256:
            return False
        text = hashlib.sha256(" ".join(book.words).encode()).hexdigest()
        if exp.get("sha256_text_joined") != text:
            return False
    return True


def estimated_groups(books: Sequence[Book], conditions: Sequence[tuple[int, int]],
                     split: str) -> Grouped:
    """The rows a build of `conditions` from `books` would give for `split`, grouped by
    excerpt as `planned.row_groups` groups them (same keys, same order, each row's `_pos` its
    place in the built folder's order), with the books' own words as texts."""
    from mindprobe.benchmarks.sort.build import plan_cells

    cells = [(b, le, ls) for b, le, ls in plan_cells(books, sorted(set(conditions)))
             if (b.book_idx, le, ls) not in BUILD_FAILURES]
    keys: list[tuple[int, int, int, int]] = []
    where: list[tuple[Book, int, int]] = []  # per group: its book, first row, bin stride
    pos = 0
    for condition in sorted({(le, ls) for _, le, ls in cells}):
        for part in _SPLITS[split]:
            for book, le, ls in cells:
                if (le, ls) != condition:
                    continue
                for k in part:
                    keys.append((le, ls, book.book_idx, k))
                    where.append((book, pos + k - part.start, len(part)))
                pos += len(part) * len(distance_bins(le, ls))

    def fetch(i: int) -> list[dict[str, Any]]:
        (le, ls, _, k), (book, first, stride) = keys[i], where[i]
        return _rows(book, le, ls, k, first, stride)

    return Grouped(keys, [len(distance_bins(k[0], k[1])) for k in keys], fetch)


def _rows(book: Book, le: int, ls: int, k: int, first: int, stride: int
          ) -> list[dict[str, Any]]:
    """Excerpt `k`'s four rows: L_E words spread over the book by `k`, one segment pair per
    distance bin at the middle of the bin (the order shown alternates)."""
    words, n = book.words, len(book.words)
    start = round((k + 0.5) * (n - le) / N_EXCERPTS)
    excerpt = wrap_excerpt(" ".join(words[start:start + le]))
    rows = []
    for b, (left, right) in enumerate(distance_bins(le, ls)):
        d = (left + right) // 2
        s1 = (le - ls - d) // 2
        s2 = s1 + d
        rows.append({
            "book_idx": book.book_idx, "excerpt_idx": k, "segment_idx": 0,
            "excerpt_text": excerpt, "excerpt_length": le,
            "segment_1": wrap_segment(" ".join(words[start + s1:start + s1 + ls])),
            "segment_2": wrap_segment(" ".join(words[start + s2:start + s2 + ls])),
            "segment_length": ls, "seg1_pos": s1, "seg2_pos": s2,
            "present_seg1_first": (k + b) % 2, "distance_bin": right,
            "excerpt_pos": start / n, "book_title": book.book_title,
            "num_words": book.num_words, "bin_index": b,
            "row_id": f"e{le}_s{ls}/{book.book_idx}/{k}/{right}",
            "estimated": True, "_pos": first + b * stride,
        })
    return rows
