"""Output files (spec §3.7) and local loading: CSV trio and Parquet splits give the same rows."""

from __future__ import annotations

import pandas as pd
import pytest

from mindprobe.benchmarks.sort.build import build_books, build_from_text, default_lengths
from mindprobe.benchmarks.sort.data import (
    available_conditions,
    evaluation_rows,
    find_files,
    load_booksort,
)
from mindprobe.benchmarks.sort.export import SPLIT_COLUMNS, write_condition
from mindprobe.errors import DataError, UsageError


@pytest.fixture(scope="module")
def written(tmp_path_factory, cell_73017):
    out = tmp_path_factory.mktemp("booksort")
    files = write_condition(out, 250, 20, [cell_73017])
    return out, files


def test_file_names_and_csv_layout(written):
    out, files = written
    assert sorted(p.name for p in files) == [
        "books_250-s20-n110.csv", "excerpts_250-s20-n110.csv", "segments_250-s20-n110.csv",
        "test_e250_s20.parquet", "validation_e250_s20.parquet"]
    lines = (out / "books_250-s20-n110.csv").read_text(encoding="utf-8").splitlines()
    assert lines == [",book_idx,book_title,num_words",
                     '0,73017,"Pomona; Or, The Future Of English",9273']
    header = (out / "segments_250-s20-n110.csv").read_text(encoding="utf-8").split("\n")[0]
    assert header == (",book_idx,excerpt_idx,segment_idx,segment_1,segment_2,seg1_pos,seg2_pos,"
                      "distance_bin,present_seg1_first")
    found = find_files(out)
    assert found["csv"] == {(250, 20): 110}


def test_csv_and_parquet_load_identically(written, cell_73017):
    out, _ = written
    csv = load_booksort(out, split="all", layout="csv")
    parquet = load_booksort(out, split="all", layout="parquet")
    assert list(csv.columns) == list(SPLIT_COLUMNS) and len(csv) == 440
    pd.testing.assert_frame_equal(csv, parquet, check_dtype=False)
    assert csv["excerpt_length"].eq(250).all() and csv["segment_length"].eq(20).all()
    assert csv["excerpt_text"].iloc[0].endswith("*\n\n")  # CSV keeps the trailing blank line
    assert available_conditions(csv) == [(250, 20)]
    test = load_booksort(out)
    validation = load_booksort(out, split="validation")
    assert (len(test), len(validation)) == (400, 40)
    assert validation["excerpt_idx"].min() == 100


def test_evaluation_rows_limit_and_ids(written):
    rows = load_booksort(written[0])
    first = evaluation_rows(rows, 250, 20, limit=3)
    assert len(first) == 3
    assert [r["excerpt_idx"] for r in first] == [0, 1, 2]  # dataset order: bin, excerpt
    assert first[0]["bin_index"] == 0 and first[0]["distance_bin"] == 62
    assert first[0]["row_id"] == "e250_s20/73017/0/62"
    assert isinstance(first[0]["present_seg1_first"], int)
    assert evaluation_rows(rows, 1000, 20) == []
    with pytest.raises(UsageError):
        evaluation_rows(rows, limit=-1)


def test_malformed_csv_errors_name_file_and_row(tmp_path, written):
    out, _ = written
    for name in ("books", "excerpts", "segments"):
        src = out / f"{name}_250-s20-n110.csv"
        (tmp_path / src.name).write_bytes(src.read_bytes())
    seg = tmp_path / "segments_250-s20-n110.csv"
    frame = pd.read_csv(seg, index_col=0, keep_default_na=False, dtype=str)
    frame.iloc[3, frame.columns.get_loc("seg1_pos")] = "twelve"
    frame.to_csv(seg)
    with pytest.raises(DataError, match=r"segments_250-s20-n110\.csv: row 3 .*seg1_pos"):
        load_booksort(tmp_path, layout="csv")
    frame.drop(columns=["seg1_pos"]).to_csv(seg)
    with pytest.raises(DataError, match=r"missing column\(s\) \['seg1_pos'\]"):
        load_booksort(tmp_path, layout="csv")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataError, match="no Book-SORT"):
        load_booksort(empty)
    with pytest.raises(UsageError, match="unknown split"):
        load_booksort(out, split="train")


def test_build_books_writes_and_drops_cells(tmp_path, books):
    summary = build_books([books[73017]], [(1000, 50)], out_dir=tmp_path, csv=False)
    assert summary.n_cells == 1 and summary.n_rows == 440 and summary.cells == {}
    assert sorted(p.name for p in summary.files) == ["test_e1000_s50.parquet",
                                                     "validation_e1000_s50.parquet"]
    assert len(load_booksort(tmp_path)) == 400


def test_build_from_text(books):
    text = " ".join(books[73017].words[:1200])
    summary = build_from_text(text, title="Pomona excerpt", seed=1)
    assert default_lengths(1200) == ([250], [20, 50])
    cells = [c for cs in summary.cells.values() for c in cs]
    assert len(cells) + len(summary.failures) == 2
    assert summary.n_rows == 440 * len(cells) and cells
    assert all(c.book_title == "Pomona excerpt" and c.seed == 1 + 250 + c.segment_length
               for c in cells)
    with pytest.raises(DataError, match="too short for excerpt length 2500"):
        build_from_text(text, excerpt_lengths=[2500])
    with pytest.raises(UsageError, match="segment length 100 is too long"):
        build_from_text(text, excerpt_lengths=[250], segment_lengths=[100])
    with pytest.raises(DataError, match="only 10 words"):
        build_from_text("one two three four five six seven eight nine ten")


def test_one_parquet_engine_writes_and_reads_booksort(cell_73017, tmp_path, monkeypatch):
    """pyarrow is the one Parquet engine (a core dependency; fastparquet is gone): Book-SORT's
    split files are written and read without fastparquet, with the hub's column types and each
    excerpt's text stored once (dictionary-encoded), and load as the CSV trio does."""
    import tomllib
    from pathlib import Path

    import pyarrow as pa
    import pyarrow.parquet as pq

    project = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml")
                            .read_text())["project"]
    deps = " ".join(project["dependencies"])
    assert "pyarrow" in deps and "fastparquet" not in deps
    assert not any("fastparquet" in d for ds in project["optional-dependencies"].values()
                   for d in ds)
    monkeypatch.setitem(__import__("sys").modules, "fastparquet", None)  # import fails
    write_condition(tmp_path, 250, 20, [cell_73017])
    schema = pq.read_schema(tmp_path / "test_e250_s20.parquet")
    assert pa.types.is_dictionary(schema.field("excerpt_text").type)
    assert schema.field("segment_1").type == pa.string()
    assert list(schema.names) == list(SPLIT_COLUMNS)
    pd.testing.assert_frame_equal(load_booksort(tmp_path, split="all", layout="csv"),
                                  load_booksort(tmp_path, split="all", layout="parquet"),
                                  check_dtype=False)
