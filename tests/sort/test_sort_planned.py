"""A SORT plan picks its rows from the data memo, grouped by excerpt: the same rows in the same
order as reading the folder gives, and a later plan decodes no Parquet at all."""

from __future__ import annotations

import pytest

from mindprobe.benchmarks.sort import data as sort_data_module
from mindprobe.benchmarks.sort.data import evaluation_rows, load_booksort
from mindprobe.benchmarks.sort.export import write_condition
from mindprobe.benchmarks.sort.planned import conditions_of, planned_rows, row_groups


@pytest.fixture(scope="module")
def folder(tmp_path_factory, cell_73017):
    out = tmp_path_factory.mktemp("booksort")
    write_condition(out, 250, 20, [cell_73017])
    return out


def _old(folder, split, limit=None, books=None, excerpts=None):
    """What the plan did before: the whole folder read, then filtered."""
    picked = evaluation_rows(load_booksort(folder, split, [(250, 20)]), 250, 20, limit=limit,
                             book_ids=books)
    if excerpts:
        first: dict = {}
        for r in picked:
            first.setdefault((r["excerpt_length"], r["segment_length"], r["book_idx"]), set())
        for r in picked:
            seen = first[(r["excerpt_length"], r["segment_length"], r["book_idx"])]
            if len(seen) < excerpts:
                seen.add(r["excerpt_idx"])
        picked = [r for r in picked if r["excerpt_idx"] in
                  first[(r["excerpt_length"], r["segment_length"], r["book_idx"])]]
    return picked


@pytest.mark.parametrize("split, limit, book_ids, excerpts", [
    ("test", None, None, None), ("test", None, None, 1), ("test", 3, None, None),
    ("test", 150, None, 2), ("all", 401, [73017], None), ("validation", None, None, 3),
    ("test", 0, None, None), ("test", None, [1], None)])
def test_same_rows_as_reading_the_folder(folder, split, limit, book_ids, excerpts):
    groups = row_groups(folder, split)
    assert conditions_of(groups) == [(250, 20)]
    got = planned_rows(groups, [(250, 20)], (250, 20), limit=limit, book_ids=book_ids,
                       excerpts=excerpts)
    assert got == _old(folder, split, limit, book_ids, excerpts)


def test_a_later_plan_decodes_no_parquet(folder, monkeypatch):
    row_groups(folder, "test")  # the memo made

    def refuse(*_a, **_k):
        raise AssertionError("the folder was read again")

    monkeypatch.setattr(sort_data_module, "_read_parquet", refuse)
    groups = row_groups(folder, "test")
    rows = planned_rows(groups, [(250, 20)], excerpts=1)
    assert len(rows) == 4 and {r["excerpt_idx"] for r in rows} == {0}
