"""Chunker quirks, BM25+ ranks (rank_bm25-identical), greedy fill and token estimate."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from mindprobe.benchmarks.fanoutqa.chunking import Chunk, chunk_pages, chunk_text
from mindprobe.benchmarks.fanoutqa.retrieval import (
    TOKEN_ESTIMATE_NAME,
    BM25Plus,
    estimate_tokens,
    greedy_fill,
    rank_chunks,
    tokenize,
)


@pytest.mark.parametrize(
    "text, size, expected",
    [
        ("", 5, [""]),
        ("short", 5, ["short"]),
        # pieces keep their re-appended separator; only the last chunk loses it
        ("aaa\n\nbbb", 5, ["aaa\n\n", "bbb"]),
        # a final chunk equal to the separator is dropped, then the new last one is cut
        ("aaa\n\nbbb\n\n", 5, ["aaa\n\n", "bbb"]),
        # merge while len(piece) + len(last) <= size
        ("a\n\nb\n\nc", 6, ["a\n\nb\n\n", "c"]),
        # the unconditional cut also hits chunks from deeper levels: a "b" is lost, and
        # the result ends with an empty chunk
        ("aaaa\n\nbbbbbbb", 5, ["aaaa\n", "\n", "bbbbb", ""]),
        ("abc\n\nde fghij", 5, ["abc\n\n", "de ", "fghij", ""]),
        # separators exhausted: hard slicing; the separators appended on the way down are
        # then cut on the way up, and the cuts eat the real tail ("xx")
        ("x" * 12, 5, ["xxxxx", "xxxxx", ""]),
    ],
)
def test_chunker_quirks(text, size, expected):
    assert chunk_text(text, size) == expected


def test_chunker_custom_separators():
    assert chunk_text("x" * 12, 5, (" ",)) == ["xxxxx", "xxxxx", "xx"]


def test_chunker_never_exceeds_size():
    rng = random.Random(0)
    alphabet = ["ab", "c", "\n\n", "\n", ". ", ", ", " ", "word" * 5]
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 120)))
        size = rng.randint(3, 40)
        assert all(len(c) <= size for c in chunk_text(text, size))


def test_chunk_pages_keeps_titles_and_duplicates():
    pages = [("A", "one\n\ntwo"), ("B", "three"), ("A", "one\n\ntwo")]
    assert chunk_pages(pages, 5) == [
        Chunk("A", "one\n\n"),
        Chunk("A", "two"),
        Chunk("B", "three"),
        Chunk("A", "one\n\n"),
        Chunk("A", "two"),
    ]


CORPUS = [
    ["the", "cat", "sat", "on", "the", "mat"],
    ["the", "dog", "sat", "on", "the", "log"],
    ["cats", "and", "dogs"],
    ["the", "the", "the"],
    [""],  # [""]: an empty chunk still counts as a document with one empty token
]


def test_bm25plus_formula():
    bm = BM25Plus(CORPUS)
    n, avgdl = len(CORPUS), sum(map(len, CORPUS)) / len(CORPUS)
    idf_the = math.log((n + 1) / 3)
    tf, dl = 2, 6
    want = idf_the * (1 + tf * 2.5 / (1.5 * (1 - 0.75 + 0.75 * dl / avgdl) + tf))
    assert bm.get_scores(["the"])[0] == pytest.approx(want, rel=1e-12)
    # absent terms contribute 0; present-but-not-in-doc terms contribute idf * delta
    assert bm.get_scores(["zebra"]).tolist() == [0.0] * n
    assert bm.get_scores(["cats"])[0] == pytest.approx(math.log(n + 1) * 1.0)


def test_bm25plus_matches_rank_bm25():
    rank_bm25 = pytest.importorskip("rank_bm25", reason="rank-bm25 not installed (reference check)")
    rng = random.Random(3)
    vocab = [f"w{i}" for i in range(30)] + [""]
    corpus = [[rng.choice(vocab) for _ in range(rng.randint(1, 40))] for _ in range(60)]
    ref, ours = rank_bm25.BM25Plus(corpus), BM25Plus(corpus)
    for _ in range(20):
        query = [rng.choice(vocab + ["zz"]) for _ in range(rng.randint(1, 8))]
        a, b = ref.get_scores(query), ours.get_scores(query)
        assert np.array_equal(a, b)
        assert np.argsort(a)[::-1].tolist() == ours.rank(query).tolist()


def test_tie_order_is_reversed_argsort():
    bm = BM25Plus([["a"], ["a"], ["a"], ["b"]])
    assert bm.rank(["a"]).tolist() == [2, 1, 0, 3]


def test_rank_chunks_normalises(exact_normalizer):
    chunks = [
        Chunk("P", "Cats sat on mats."),
        Chunk("Q", "Dogs ran away."),
        Chunk("R", "A dog was running."),
    ]
    ranked = rank_chunks(chunks, "Which dogs ran?", exact_normalizer)
    assert [c.title for c in ranked][:2] == ["Q", "R"]
    assert tokenize("a  b ") == ["a", "", "b", ""]
    assert rank_chunks([], "q", exact_normalizer) == []


def test_greedy_fill_first_overflow_ends_loop():
    def render(items):
        return "".join(items)

    items = ["aaaa", "bbbb", "cccccccc", "d"]  # "d" would fit after the overflow: not tried
    kept, text = greedy_fill(items, render, len, 10)
    assert kept == ["aaaa", "bbbb"] and text == "aaaabbbb"
    kept, text = greedy_fill(items, render, len, 8)  # exactly at the budget is kept
    assert kept == ["aaaa", "bbbb"]
    kept, text = greedy_fill(items, render, len, 7)
    assert kept == ["aaaa"]
    assert greedy_fill(items, render, len, 3) == ([], "")


def test_estimate_tokens():
    assert TOKEN_ESTIMATE_NAME.startswith("estimate:")
    assert estimate_tokens("") == 0
    assert estimate_tokens("hello world") == 3  # ceil(11 / 4)
    assert estimate_tokens("1,234 | 5.6 |") == 8  # pre-tokens dominate on numeric tables
