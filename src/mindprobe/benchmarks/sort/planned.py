"""The rows a SORT plan picks from, memoised on disk and grouped by excerpt.

Reading a Book-SORT folder (200 MB of Parquet for the full grid, 290 MB of excerpt text) and
turning it into rows took seconds at every plan, though a quick profile asks 332 of its 33,200
segment pairs. The rows of a split are decoded once into the data memo
(`core.data.decoded_groups`), one compressed group per excerpt (its questions share one copy
of its text); a plan chooses groups from their keys alone and decodes only those. Each row
keeps its place in the folder's order, so the rows come back as `load_booksort` and
`evaluation_rows` give them. A run's own build from the books goes into the same memo
directly (`built_groups`, both splits; `split_of` picks one), with no files in between.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mindprobe.benchmarks.sort.data import (
    SPLIT_CHOICES,
    evaluation_rows,
    find_files,
    load_booksort,
)
from mindprobe.benchmarks.sort.export import TEST_EXCERPTS
from mindprobe.core.data import Grouped, decoded_groups
from mindprobe.errors import DataError, UsageError

#: Bumped when the rows' shape changes (the memo is then made anew).
_VERSION = "rows-v1"
#: The data memo's kind for a run's build (`built_groups`).
BUILT_KIND = "sort-built-rows"


def _stamp(root: Path, split: str) -> str:
    """What identifies a folder's Book-SORT files: each file's name, size, modification time
    and inode (a file rewritten in place changes its time; a replaced one its inode)."""
    found = find_files(root)
    paths = [p for ps in found["parquet"].values() for p in ps]
    paths += sorted(root.rglob("*.csv"))
    parts = []
    for p in sorted(paths):
        st = p.stat()
        parts.append((str(p.relative_to(root)), st.st_size, st.st_mtime_ns, st.st_ino))
    return hashlib.sha256(repr((str(root.resolve()), split, parts, _VERSION))
                          .encode()).hexdigest()


def row_groups(root: str | Path, split: str) -> Grouped:
    """Every evaluation row of `split` in `root` (with `_pos`, its place in order), grouped by
    excerpt: key (L_E, L_S, book, excerpt), in the order of each excerpt's first row."""
    root = Path(root)
    return _memoised(root, _stamp(root, split), "sort-rows",
                     lambda: evaluation_rows(load_booksort(root, split)))


def built_groups(root: Path, stamp: str, build: Callable[[], list[dict[str, Any]]]
                 ) -> Grouped:
    """The rows (both splits, as `evaluation_rows` gives them) `build()` makes, grouped as
    `row_groups` groups a folder's and memoised under `stamp`: a run's build goes straight
    into the memo, no files between; `split_of` picks a split."""
    return _memoised(root, stamp, BUILT_KIND, build)


def split_of(groups: Grouped, split: str) -> Grouped:
    """The groups of one split (test: excerpts 0-99, validation: 100-109; `all`: every one)."""
    if split not in SPLIT_CHOICES:
        raise UsageError(f"unknown split {split!r}; choose from {', '.join(SPLIT_CHOICES)}")
    if split == "all":
        return groups
    kept = [k for k in groups.keys if (k[3] < TEST_EXCERPTS) == (split == "test")]
    sizes = dict(zip(groups.keys, groups.sizes, strict=True))
    return Grouped(kept, [sizes[k] for k in kept], lambda i: groups.load([kept[i]]))


def _memoised(path: Path, stamp: str, kind: str,
              rows_of: Callable[[], list[dict[str, Any]]]) -> Grouped:
    def decode(_: Path) -> list[dict[str, Any]]:
        rows = rows_of()
        texts: dict[str, str] = {}
        for i, row in enumerate(rows):
            row["_pos"] = i
            # one object per text: marshal then stores an excerpt once per group
            row["excerpt_text"] = texts.setdefault(row["excerpt_text"], row["excerpt_text"])
        return rows

    return decoded_groups(path, stamp, kind, decode, _key, packed=True)


def conditions_of(groups: Grouped) -> list[tuple[int, int]]:
    """Sorted (L_E, L_S) pairs the rows hold."""
    return sorted({(k[0], k[1]) for k in groups.keys})


def planned_rows(groups: Grouped, conditions: list[tuple[int, int]],
                 condition: tuple[int, int] | None = None, limit: int | None = None,
                 book_ids: list[int] | None = None, excerpts: int | None = None,
                 root: Path | str = "") -> list[dict[str, Any]]:
    """The rows `evaluation_rows` gives for `conditions` (one `condition`, `book_ids`, the
    first `limit`), keeping the first `excerpts` excerpts of each condition and book. Without
    a limit only the kept excerpts are decoded."""
    if limit is not None and limit < 0:
        raise UsageError(f"--limit must be >= 0, got {limit}")
    wanted = set(conditions)
    keys = [k for k in groups.keys if (k[0], k[1]) in wanted]
    if not keys:
        raise DataError(f"{root}: no rows for conditions {conditions}")
    if condition is not None:
        keys = [k for k in keys if (k[0], k[1]) == condition]
    if book_ids is not None:
        keys = [k for k in keys if k[2] in set(book_ids)]
    if excerpts and limit is None:  # keys come in the order of their first rows
        keys = _first_excerpts(keys, excerpts)
    rows = sorted(groups.load(keys), key=lambda r: r["_pos"])
    if limit is not None:
        rows = rows[:limit]
        if excerpts:
            kept = set(_first_excerpts([_key(r) for r in rows], excerpts))
            rows = [r for r in rows if _key(r) in kept]
    for r in rows:
        del r["_pos"]
    return rows


def _key(row: dict[str, Any]) -> tuple[int, int, int, int]:
    return (row["excerpt_length"], row["segment_length"], row["book_idx"], row["excerpt_idx"])


def _first_excerpts(keys: list[tuple[int, ...]], k: int) -> list[tuple[int, ...]]:
    """The keys of each condition and book's first `k` excerpts, in order (repeats kept)."""
    first: dict[tuple[int, ...], set[int]] = {}
    out = []
    for key in keys:
        seen = first.setdefault(key[:3], set())
        if key[3] in seen or len(seen) < k:
            seen.add(key[3])
            out.append(key)
    return out
