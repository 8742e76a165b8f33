"""The rows a SORT plan picks from, memoised on disk and grouped by excerpt.

Reading a Book-SORT folder (200 MB of Parquet for the full grid) and turning it into rows
took seconds at every plan, though a quick profile asks 332 of its 33,200 segment pairs. The
rows of a split are decoded once into the data memo (`core.data.decoded_groups`), one group
per excerpt (a condition, book and excerpt, in the folder's order); a plan chooses groups
from their keys alone and decodes only those. Same rows, same order as `load_booksort` and
`evaluation_rows` give.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from mindprobe.benchmarks.sort.data import evaluation_rows, find_files, load_booksort
from mindprobe.core.data import Grouped, decoded_groups
from mindprobe.errors import DataError, UsageError

#: Bumped when the rows' shape changes (the memo is then made anew).
_VERSION = "rows-v1"


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
    """Every evaluation row of `split` in `root`, grouped by excerpt: key (L_E, L_S, book,
    excerpt, run), `run` telling apart an excerpt's rows should they not be contiguous."""
    root = Path(root)
    last: list[Any] = [None, -1]

    def key(row: dict[str, Any]) -> tuple[int, int, int, int, int]:
        k = (row["excerpt_length"], row["segment_length"], row["book_idx"], row["excerpt_idx"])
        if k != last[0]:
            last[0], last[1] = k, last[1] + 1
        return (*k, last[1])

    def decode(_: Path) -> list[dict[str, Any]]:
        return evaluation_rows(load_booksort(root, split))

    return decoded_groups(root, _stamp(root, split), "sort-rows", decode, key)


def conditions_of(groups: Grouped) -> list[tuple[int, int]]:
    """Sorted (L_E, L_S) pairs the rows hold."""
    return sorted({(k[0], k[1]) for k in groups.keys})


def planned_rows(groups: Grouped, conditions: list[tuple[int, int]],
                 condition: tuple[int, int] | None = None, limit: int | None = None,
                 book_ids: list[int] | None = None, excerpts: int | None = None,
                 root: Path | str = "") -> list[dict[str, Any]]:
    """The rows `evaluation_rows` gives for `conditions` (one `condition`, `book_ids`, the
    first `limit`), keeping the first `excerpts` excerpts of each condition and book; only
    their groups are decoded."""
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
    take: dict[Any, int] = {}  # the last group a limit reaches is cut
    if limit is not None:
        sizes = dict(zip(groups.keys, groups.sizes, strict=True))
        taken, n = [], 0
        for k in keys:
            if n >= limit:
                break
            taken.append(k)
            take[k] = min(sizes[k], limit - n)
            n += sizes[k]
        keys = taken
    if excerpts:
        first: dict[tuple[int, int, int], set[int]] = {}
        kept = []
        for k in keys:
            seen = first.setdefault(k[:3], set())
            if k[3] in seen or len(seen) < excerpts:
                seen.add(k[3])
                kept.append(k)
        keys = kept
    if limit is None:
        return groups.load(keys)
    return [row for k in keys for row in groups.load([k])[:take[k]]]
