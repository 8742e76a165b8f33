"""Book-SORT output files (spec §3.7): the per-condition CSV trio and the HF-style splits.

The CSV layout is the original release's (pandas default index as an unnamed first column);
the Parquet files mirror the Hugging Face rows (segments ⋈ excerpts ⋈ books, 15 columns) so the
loader in :mod:`.dataset` reads our builds and downloaded copies alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from mindprobe.benchmarks.sort.cell import N_EXCERPTS, CellResult
from mindprobe.core.files import write_file

if TYPE_CHECKING:  # imported where a frame is made: a warm plan imports this module
    import pandas as pd

BOOK_COLUMNS: tuple[str, ...] = ("book_idx", "book_title", "num_words")
EXCERPT_COLUMNS: tuple[str, ...] = ("book_idx", "excerpt_idx", "excerpt_pos", "excerpt_text")
SEGMENT_COLUMNS: tuple[str, ...] = (
    "book_idx", "excerpt_idx", "segment_idx", "segment_1", "segment_2", "seg1_pos", "seg2_pos",
    "distance_bin", "present_seg1_first",
)
SPLIT_COLUMNS: tuple[str, ...] = (
    "book_idx", "excerpt_idx", "segment_idx", "excerpt_text", "excerpt_length", "segment_1",
    "segment_2", "segment_length", "seg1_pos", "seg2_pos", "present_seg1_first", "distance_bin",
    "excerpt_pos", "book_title", "num_words",
)
TEST_EXCERPTS = 100  # excerpt_idx < 100 → test, 100..109 → validation
SPLITS: tuple[str, ...] = ("test", "validation")


def csv_names(excerpt_length: int, segment_length: int, n: int = N_EXCERPTS
              ) -> dict[str, str]:
    """File names of one condition's CSV trio, keyed books/excerpts/segments."""
    tail = f"{excerpt_length}-s{segment_length}-n{n}.csv"
    return {kind: f"{kind}_{tail}" for kind in ("books", "excerpts", "segments")}


def parquet_name(split: str, excerpt_length: int, segment_length: int) -> str:
    """Upstream writer's split file name, e.g. ``test_e250_s20.parquet``."""
    return f"{split}_e{excerpt_length}_s{segment_length}.parquet"


def condition_frames(cells: Sequence[CellResult]
                     ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(books, excerpts, segments) frames of one condition, rows in book, bin, excerpt order."""
    import pandas as pd

    books = pd.DataFrame([{"book_idx": c.book_idx, "book_title": c.book_title,
                           "num_words": c.num_words} for c in cells], columns=list(BOOK_COLUMNS))
    excerpts = pd.DataFrame([row for c in cells for row in c.excerpts],
                            columns=list(EXCERPT_COLUMNS))
    segments = pd.DataFrame([row for c in cells for row in c.segments],
                            columns=list(SEGMENT_COLUMNS))
    return books, excerpts, segments


def split_frame(books: pd.DataFrame, excerpts: pd.DataFrame, segments: pd.DataFrame,
                categorical_text: bool = False) -> pd.DataFrame:
    """HF-style rows: segments joined with their excerpt and book, plus the two lengths.

    Each excerpt text is repeated once per distance bin; ``categorical_text`` keeps one copy
    per distinct excerpt (a dictionary-encoded column in Parquet, ~4x smaller and faster).
    """
    import pandas as pd

    ex = excerpts.copy()
    ex["excerpt_length"] = [len(t.split()) for t in ex["excerpt_text"]]
    if categorical_text:  # same book and position ⇔ same text; avoids hashing long strings
        codes, first = pd.factorize(pd.MultiIndex.from_frame(ex[["book_idx", "excerpt_pos"]]))
        uniq = ex["excerpt_text"].to_numpy()[
            pd.Series(range(len(ex))).groupby(codes).first().to_numpy()]
        ex["excerpt_text"] = pd.Categorical.from_codes(codes, categories=pd.Index(uniq))
    joined = segments.merge(ex, on=["book_idx", "excerpt_idx"], how="left", validate="m:1")
    joined = joined.merge(books, on="book_idx", how="left", validate="m:1")
    joined["segment_length"] = [len(t.split()) for t in joined["segment_1"]]
    return joined[list(SPLIT_COLUMNS)]


def write_parquet(frame: pd.DataFrame, path: str | Path) -> None:
    """Write with pyarrow, the one Parquet engine (exports use it too); a categorical column
    is stored dictionary-encoded, so each excerpt's text is kept once."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(frame.reset_index(drop=True), preserve_index=False)
    # pandas' str columns arrive as large_string; the hub's Book-SORT files hold string
    fields = [f.with_type(pa.string()) if pa.types.is_large_string(f.type) else f
              for f in table.schema]
    table = table.cast(pa.schema(fields, metadata=table.schema.metadata))
    write_file(Path(path), lambda tmp: pq.write_table(table, str(tmp), compression="snappy"),
               replace=True)


def write_condition(out_dir: str | Path, excerpt_length: int, segment_length: int,
                    cells: Sequence[CellResult], *, n: int = N_EXCERPTS, csv: bool = True,
                    parquet: bool = True) -> list[Path]:
    """Write one condition's CSV trio and/or test+validation Parquet files; returns paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    books, excerpts, segments = condition_frames(cells)
    written: list[Path] = []
    if csv:
        names = csv_names(excerpt_length, segment_length, n)
        for kind, frame in (("books", books), ("excerpts", excerpts), ("segments", segments)):
            path = out / names[kind]
            write_file(path, frame.to_csv(), replace=True)
            written.append(path)
    if parquet:
        rows = split_frame(books, excerpts, segments, categorical_text=True)
        is_test = rows["excerpt_idx"] < TEST_EXCERPTS
        for split, part in (("test", rows[is_test]), ("validation", rows[~is_test])):
            path = out / parquet_name(split, excerpt_length, segment_length)
            part = part.copy()
            part["excerpt_text"] = part["excerpt_text"].cat.remove_unused_categories()
            write_parquet(part, path)
            written.append(path)
    return written
