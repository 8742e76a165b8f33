"""Load Book-SORT from a local folder (spec §3.7): the CSV trio or the Parquet split files.

Both layouts become the same 15-column frame (the Hugging Face row shape), so evaluation does
not care whether the user downloaded the hub files, kept the original CSV release, or ran
``mindprobe build sort``. Parquet splits are found by file-name prefix (``test*`` /
``validation*``) and conditions by their ``excerpt_length``/``segment_length`` columns, so
hub file names that differ from upstream's writer still load.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mindprobe.benchmarks.sort.cell import distance_edges
from mindprobe.benchmarks.sort.export import (
    BOOK_COLUMNS,
    EXCERPT_COLUMNS,
    SEGMENT_COLUMNS,
    SPLIT_COLUMNS,
    TEST_EXCERPTS,
    split_frame,
)
from mindprobe.errors import DataError, UsageError

if TYPE_CHECKING:  # pandas imported where the Book-SORT files are read: a warm plan reads
    import pandas as pd  # its memo

    from mindprobe.benchmarks.sort.cell import CellResult

SPLIT_CHOICES: tuple[str, ...] = ("test", "validation", "all")
_CSV_RE = re.compile(r"segments_(\d+)-s(\d+)-n(\d+)\.csv$")
_INT_COLUMNS = ("book_idx", "excerpt_idx", "segment_idx", "excerpt_length", "segment_length",
                "seg1_pos", "seg2_pos", "present_seg1_first", "distance_bin", "num_words")
_TEXT_COLUMNS = ("excerpt_text", "segment_1", "segment_2", "book_title")


def _read_parquet(path: Path) -> pd.DataFrame:
    """Read with pyarrow (the one Parquet engine, a core dependency)."""
    import pandas as pd

    try:
        frame = pd.read_parquet(path, engine="pyarrow")
    except Exception as exc:  # corrupt files raise many types
        raise DataError(f"{path}: not a readable Parquet file ({exc})") from exc
    for col in frame.columns:
        if isinstance(frame[col].dtype, pd.CategoricalDtype):
            frame[col] = frame[col].astype(object)
    return frame


def _read_csv(path: Path, columns: tuple[str, ...]) -> pd.DataFrame:
    import pandas as pd

    try:
        frame = pd.read_csv(path, index_col=0, keep_default_na=False,
                            dtype={c: str for c in _TEXT_COLUMNS})
    except FileNotFoundError as exc:
        raise DataError(f"{path}: missing (the CSV layout needs books_, excerpts_ and "
                        "segments_ files for each condition)") from exc
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise DataError(f"{path}: malformed CSV ({exc})") from exc
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise DataError(f"{path}: missing column(s) {missing}; found {list(frame.columns)}")
    return frame.reset_index(drop=True)


def _check(frame: pd.DataFrame, path: Path | str, columns: tuple[str, ...]) -> pd.DataFrame:
    """Coerce and validate types; errors name the file, row and column."""
    import pandas as pd

    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise DataError(f"{path}: missing column(s) {missing}; found {list(frame.columns)}")
    frame = frame[list(columns)].copy()
    for col in columns:
        if col in _INT_COLUMNS:
            num = pd.to_numeric(frame[col], errors="coerce")
            bad = num.isna() | (num != num.round())
            if bad.any():
                row = int(bad.to_numpy().nonzero()[0][0])
                raise DataError(f"{path}: row {row} ({_line_hint(path, row)}): column {col} "
                                f"is {frame[col].iloc[row]!r}, expected an integer")
            frame[col] = num.astype("int64")
        elif col == "excerpt_pos":
            frame[col] = pd.to_numeric(frame[col], errors="coerce")
            if frame[col].isna().any():
                row = int(frame[col].isna().to_numpy().nonzero()[0][0])
                raise DataError(f"{path}: row {row} ({_line_hint(path, row)}): excerpt_pos "
                                "is not a number")
        elif col in _TEXT_COLUMNS:
            bad = ~frame[col].map(lambda v: isinstance(v, str) and v != "")
            if bad.any():
                row = int(bad.to_numpy().nonzero()[0][0])
                raise DataError(f"{path}: row {row} ({_line_hint(path, row)}): column {col} "
                                "is empty or not text")
    if "present_seg1_first" in frame and not frame["present_seg1_first"].isin([0, 1]).all():
        row = int((~frame["present_seg1_first"].isin([0, 1])).to_numpy().nonzero()[0][0])
        raise DataError(f"{path}: row {row}: present_seg1_first must be 0 or 1")
    if {"seg1_pos", "seg2_pos"} <= set(frame) and (frame["seg1_pos"] >= frame["seg2_pos"]).any():
        row = int((frame["seg1_pos"] >= frame["seg2_pos"]).to_numpy().nonzero()[0][0])
        raise DataError(f"{path}: row {row}: seg1_pos must be < seg2_pos (segment_1 is the "
                        "earlier segment)")
    return frame


def _line_hint(path: Path | str, row: int) -> str:
    return f"CSV data row {row + 1}" if str(path).endswith(".csv") else f"record {row}"


def find_files(root: str | Path) -> dict[str, Any]:
    """What a folder holds: {"csv": {(L_E, L_S): n}, "parquet": {split: [paths]}}."""
    base = Path(root)
    if not base.is_dir():
        raise DataError(f"{base}: Book-SORT folder not found")
    csv: dict[tuple[int, int], int] = {}
    parquet: dict[str, list[Path]] = {"test": [], "validation": []}
    for path in sorted(base.rglob("*")):
        match = _CSV_RE.search(path.name)
        if match:
            csv[(int(match.group(1)), int(match.group(2)))] = int(match.group(3))
        elif path.suffix == ".parquet":
            for split in parquet:
                if path.name.startswith(split):
                    parquet[split].append(path)
    return {"csv": csv, "parquet": parquet}


def _load_csv_condition(root: Path, le: int, ls: int, n: int) -> pd.DataFrame:
    names = {k: next(root.rglob(f"{k}_{le}-s{ls}-n{n}.csv"), root / f"{k}_{le}-s{ls}-n{n}.csv")
             for k in ("books", "excerpts", "segments")}
    books = _check(_read_csv(names["books"], BOOK_COLUMNS), names["books"], BOOK_COLUMNS)
    excerpts = _check(_read_csv(names["excerpts"], EXCERPT_COLUMNS), names["excerpts"],
                      EXCERPT_COLUMNS)
    segments = _check(_read_csv(names["segments"], SEGMENT_COLUMNS), names["segments"],
                      SEGMENT_COLUMNS)
    keys = set(zip(excerpts["book_idx"], excerpts["excerpt_idx"], strict=True))
    for i, key in enumerate(zip(segments["book_idx"], segments["excerpt_idx"], strict=True)):
        if key not in keys:
            raise DataError(f"{names['segments']}: row {i}: excerpt {key} not in "
                            f"{names['excerpts'].name}")
    unknown = set(segments["book_idx"]) - set(books["book_idx"])
    if unknown:
        raise DataError(f"{names['books']}: book(s) {sorted(unknown)} used by segments missing")
    return split_frame(books, excerpts, segments)


def load_booksort(root: str | Path, split: str = "test",
                  conditions: list[tuple[int, int]] | None = None,
                  layout: str = "auto") -> pd.DataFrame:
    """All rows of the chosen split and conditions, in dataset order, as the 15 HF columns.

    ``layout`` is ``auto`` (Parquet when present, else CSV), ``parquet`` or ``csv``.
    """
    import pandas as pd

    if split not in SPLIT_CHOICES:
        raise UsageError(f"unknown split {split!r}; choose from {', '.join(SPLIT_CHOICES)}")
    found = find_files(root)
    has_parquet = any(found["parquet"].values())
    if layout == "auto":
        layout = "parquet" if has_parquet else "csv"
    frames: list[pd.DataFrame] = []
    if layout == "parquet":
        splits = ["test", "validation"] if split == "all" else [split]
        for name in splits:
            for path in found["parquet"][name]:
                frame = _check(_read_parquet(path), path, SPLIT_COLUMNS)
                frames.append(frame)
    elif layout == "csv":
        for (le, ls), n in sorted(found["csv"].items()):
            if conditions is None or (le, ls) in conditions:
                frames.append(_load_csv_condition(Path(root), le, ls, n))
    else:
        raise UsageError(f"unknown layout {layout!r}; choose auto, parquet or csv")
    if not frames:
        raise DataError(f"{root}: no Book-SORT {layout} files found (expected "
                        "segments_<LE>-s<LS>-n110.csv trios or test_/validation_ Parquet files)")
    rows = pd.concat(frames, ignore_index=True)
    # conditions in numeric order, test rows before validation rows, else the files' order
    rows["_validation"] = rows["excerpt_idx"] >= TEST_EXCERPTS
    rows = rows.sort_values(["excerpt_length", "segment_length", "_validation"],
                            kind="stable", ignore_index=True).drop(columns="_validation")
    if conditions is not None:
        wanted = pd.Series(list(zip(rows["excerpt_length"], rows["segment_length"],
                                    strict=True))).isin(conditions)
        rows = rows[wanted.to_numpy()]
    if split == "test":
        rows = rows[rows["excerpt_idx"] < TEST_EXCERPTS]
    elif split == "validation":
        rows = rows[rows["excerpt_idx"] >= TEST_EXCERPTS]
    if rows.empty:
        raise DataError(f"{root}: no rows for split {split!r} and conditions {conditions}")
    return rows.reset_index(drop=True)


def available_conditions(rows: pd.DataFrame) -> list[tuple[int, int]]:
    """Sorted (L_E, L_S) pairs present in a loaded frame."""
    pairs = set(zip(rows["excerpt_length"], rows["segment_length"], strict=True))
    return sorted((int(a), int(b)) for a, b in pairs)


def evaluation_rows(rows: pd.DataFrame, excerpt_length: int | None = None,
                    segment_length: int | None = None, limit: int | None = None,
                    book_ids: list[int] | None = None) -> list[dict[str, Any]]:
    """Rows to evaluate (dicts), optionally one condition/books; ``limit`` = first N in order.

    Adds ``row_id`` (stable across runs: ``e{L_E}_s{L_S}/{book}/{excerpt}/{bin}``) and
    ``bin_index`` (0–3 within the condition) to the HF fields.
    """
    sel = rows
    if excerpt_length is not None:
        sel = sel[sel["excerpt_length"] == excerpt_length]
    if segment_length is not None:
        sel = sel[sel["segment_length"] == segment_length]
    if book_ids is not None:
        sel = sel[sel["book_idx"].isin(book_ids)]
    if limit is not None:
        if limit < 0:
            raise UsageError(f"--limit must be >= 0, got {limit}")
        sel = sel.iloc[:limit]
    out = []
    for rec in sel.to_dict("records"):
        rec = {k: (int(v) if k in _INT_COLUMNS else v) for k, v in rec.items()}
        edges = distance_edges(rec["excerpt_length"], rec["segment_length"])
        labels = edges[1:]
        rec["bin_index"] = labels.index(rec["distance_bin"]) if rec["distance_bin"] in labels \
            else -1
        rec["row_id"] = (f"e{rec['excerpt_length']}_s{rec['segment_length']}/{rec['book_idx']}"
                         f"/{rec['excerpt_idx']}/{rec['distance_bin']}")
        out.append(rec)
    return out


def cell_rows(cells: Mapping[tuple[int, int], Sequence[CellResult]]) -> list[dict[str, Any]]:
    """The rows `evaluation_rows(load_booksort(folder, "all"))` gives for the folder a build of
    `cells` writes (same fields, values and order), made straight from the cells: a run's
    build then skips writing Parquet, reading it back and joining 300 MB of excerpts in pandas
    (tens of CPU seconds for the whole grid)."""
    out: list[dict[str, Any]] = []
    for le, ls in sorted(cells):
        labels = distance_edges(le, ls)[1:]
        for validation in (False, True):
            for cell in cells[(le, ls)]:
                excerpts = {e["excerpt_idx"]: e for e in cell.excerpts}
                for seg in cell.segments:
                    k = int(seg["excerpt_idx"])
                    if (k >= TEST_EXCERPTS) != validation:
                        continue
                    ex, bin_ = excerpts[k], int(seg["distance_bin"])
                    out.append({
                        "book_idx": int(cell.book_idx), "excerpt_idx": k,
                        "segment_idx": int(seg["segment_idx"]),
                        "excerpt_text": ex["excerpt_text"], "excerpt_length": le,
                        "segment_1": seg["segment_1"], "segment_2": seg["segment_2"],
                        "segment_length": ls, "seg1_pos": int(seg["seg1_pos"]),
                        "seg2_pos": int(seg["seg2_pos"]),
                        "present_seg1_first": int(seg["present_seg1_first"]),
                        "distance_bin": bin_, "excerpt_pos": float(ex["excerpt_pos"]),
                        "book_title": cell.book_title, "num_words": int(cell.num_words),
                        "bin_index": labels.index(bin_) if bin_ in labels else -1,
                        "row_id": f"e{le}_s{ls}/{cell.book_idx}/{k}/{bin_}"})
    return out
