"""Dataset creation (spec §3, §8, §9): bins, markers, RNG exactness, gates, row invariants."""

from __future__ import annotations

import numpy as np
import pytest

from mindprobe.benchmarks.sort.build import (
    BuildSummary,
    build_books,
    parse_seed_override,
    search_seed,
)
from mindprobe.benchmarks.sort.cell import (
    CellFailed,
    CellProgress,
    _valid_starts,
    build_cell,
    cell_seed,
    distance_bins,
    distance_edges,
    has_sentence_marker,
    sentence_markers,
    sentence_starts,
)
from mindprobe.errors import UsageError

BIN_LABELS = {250: [62, 83, 125, 200], 1000: [250, 333, 500, 800],
              2500: [625, 833, 1250, 2000], 10000: [1000, 2500, 5000, 8000],
              20000: [1000, 5000, 10000, 16000]}
EXAMPLE_TEXT = ("Tom woke early. He made tea; the kettle sang. Outside, rain fell! Was it "
                "Monday? Mr. Bell knocked twice.")
EXAMPLE = EXAMPLE_TEXT.split()


@pytest.mark.parametrize("le", sorted(BIN_LABELS))
def test_bin_table(le):
    for ls in (20, 50):
        edges = distance_edges(le, ls)
        assert edges[0] == ls and edges[1:] == BIN_LABELS[le]
        assert [r for _, r in distance_bins(le, ls)] == BIN_LABELS[le]


def test_marker_rule():
    assert has_sentence_marker("tea;") and has_sentence_marker("Monday?")
    assert has_sentence_marker("fell!") and has_sentence_marker("St.")
    assert has_sentence_marker("a.b")  # anywhere in the word
    for exempt in ("Mr.", "MRS.", "dr."):
        assert not has_sentence_marker(exempt)
    assert not has_sentence_marker("Outside,")


def test_worked_example():
    """Spec §8: markers, starts, back-off, candidate sets, rendered segments."""
    assert len(EXAMPLE) == 19 and EXAMPLE[15] == "Mr."
    assert np.flatnonzero(sentence_markers(EXAMPLE)).tolist() == [2, 5, 8, 11, 14, 18]
    starts = sentence_starts(EXAMPLE)
    assert starts == [0, 3, 6, 9, 12, 15]
    usable = np.array([s for s in starts if s < 19 - 3])
    assert usable[np.searchsorted(usable, 13, side="right") - 1] == 12  # draw 13 → 12
    valid_near = _valid_starts([usable], 3, 7, 100)[0]
    assert valid_near.all()  # every start has a partner at distance 6
    s = 9
    assert [x - s for x in usable if x != s and 3 < abs(x - s) <= 7] == [-6, 6]
    far = [x - 0 for x in usable if x != 0 and 7 < abs(x) <= 12]
    assert far == [9, 12]  # 12 may be drawn, and is then rejected (|o| >= right edge)
    assert " ".join(EXAMPLE[9:12]) == "Outside, rain fell!"
    assert " ".join(EXAMPLE[15:18]) == "Mr. Bell knocked"


def test_rng_exactness_hf_card_example(books):
    cell = build_cell(books[69087], 250, 20)
    assert cell.seed == 69357
    first = cell.excerpts[0]
    assert first["excerpt_pos"] == pytest.approx(0.3969428362, abs=1e-10)
    assert round(first["excerpt_pos"] * len(books[69087].words)) == 27630
    assert first["excerpt_text"].startswith("*") and first["excerpt_text"].endswith("*\n\n")
    row = next(r for r in cell.segments if r["excerpt_idx"] == 0 and r["distance_bin"] == 62)
    assert (row["seg1_pos"], row["seg2_pos"], row["present_seg1_first"]) == (72, 104, 0)
    words = books[69087].words[27630:27630 + 250]
    assert row["segment_1"] == "*" + " ".join(words[72:92]) + "*"


def test_failing_cell_and_its_override(books):
    with pytest.raises(CellFailed, match=r"72600·250·50 \(seed 72900\).*72600:250:50=8382"):
        build_cell(books[72600], 250, 50)
    assert cell_seed(72600, 250, 50) == 8382
    assert len(build_cell(books[72600], 250, 50, seed=8382).segments) == 440


def test_build_continues_past_failed_cells(books):
    ticks: list[CellProgress] = []
    summary = build_books([books[72600], books[73017]], [(250, 50)],
                          seed_overrides=dict([parse_seed_override("72600:250:50=72900")]),
                          progress=ticks.append)
    assert isinstance(summary, BuildSummary)
    assert summary.n_cells == 1 and len(summary.failures) == 1
    assert "override 72600:250:50=8382" in summary.failures[0].message
    assert [t.stage for t in ticks if t.book_idx == 72600][-1] == "failed"
    done = [t for t in ticks if t.book_idx == 73017]
    assert done[-1].stage == "done" and done[-1].done == done[-1].total
    assert all(a.done <= b.done for a, b in zip(done, done[1:], strict=False))


def test_seed_override_parsing_and_search(books):
    assert parse_seed_override("72869:250:50=2605") == ((72869, 250, 50), 2605)
    with pytest.raises(UsageError, match="BOOK:LE:LS=SEED"):
        parse_seed_override("72869-250-50=2605")
    seed, cell = search_seed(books[72600], 250, 50, start=8382, tries=1)
    assert seed == 8382 and len(cell.segments) == 440


@pytest.mark.parametrize("ls", [20, 50])
def test_fast_equals_straightforward(books, ls):
    fast = build_cell(books[73017], 1000, ls, fast=True)
    plain = build_cell(books[73017], 1000, ls, fast=False)
    assert fast.excerpts == plain.excerpts and fast.segments == plain.segments
    assert (fast.excerpt_pvalue, fast.segment_pvalue) == (plain.excerpt_pvalue,
                                                          plain.segment_pvalue)


def test_fast_equals_straightforward_with_hopeless_excerpts(books, cell_73017):
    """L_E 250 has excerpts with no pair in a bin: 10,001 retries, consumed in bulk."""
    assert cell_73017.bad_excerpts  # the bulk path really ran
    plain = build_cell(books[73017], 250, 20, fast=False)
    assert cell_73017.segments == plain.segments and cell_73017.excerpts == plain.excerpts


def test_cell_invariants(books, cell_73017):
    cell, words = cell_73017, books[73017].words
    markers = sentence_markers(words)
    assert len(cell.segments) == 440 and len(cell.excerpts) == 110
    assert [e["excerpt_idx"] for e in cell.excerpts] == list(range(110))
    starts = {}
    for ex in cell.excerpts:
        start = round(ex["excerpt_pos"] * len(words))
        assert start == 0 or markers[start - 1]
        assert ex["excerpt_text"] == "*" + " ".join(words[start:start + 250]) + "*\n\n"
        starts[ex["excerpt_idx"]] = start
    bins = distance_bins(250, 20)
    order = [(r["distance_bin"], r["excerpt_idx"]) for r in cell.segments]
    assert order == sorted(order)
    for row in cell.segments:
        left, right = next(b for b in bins if b[1] == row["distance_bin"])
        assert left < row["seg2_pos"] - row["seg1_pos"] < right
        base = starts[row["excerpt_idx"]]
        for pos, key in ((row["seg1_pos"], "segment_1"), (row["seg2_pos"], "segment_2")):
            assert pos < 250 - 20 and (pos == 0 or markers[base + pos - 1])
            assert row[key] == "*" + " ".join(words[base + pos:base + pos + 20]) + "*"
    share = np.mean([r["present_seg1_first"] for r in cell.segments])
    assert 0.4 < share < 0.6


def test_unwrapped_form(books):
    cell = build_cell(books[73017], 1000, 50, wrap=False)
    assert not cell.segments[0]["segment_1"].startswith("*")
    assert len(cell.segments[0]["segment_1"].split()) == 50


def test_valid_start_masks_match_brute_force():
    gen = np.random.default_rng(1)
    for _ in range(100):
        le = int(gen.integers(20, 400))
        excerpts = [np.unique(np.concatenate([[0], gen.integers(0, le, int(gen.integers(0, 30)))]))
                    for _ in range(int(gen.integers(1, 6)))]
        left = int(gen.integers(0, le // 3 + 1))
        right = int(gen.integers(left + 1, le + 1))
        for starts, mask in zip(excerpts, _valid_starts(excerpts, left, right, 4 * le),
                                strict=True):
            expected = [any(x != s and left < abs(x - s) <= right for x in starts)
                        for s in starts]
            assert mask.tolist() == expected
