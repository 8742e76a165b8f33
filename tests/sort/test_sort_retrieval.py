"""Retrieval condition: fixed-size passages, BM25 finds the passage holding each segment."""

from __future__ import annotations

import pytest

from mindprobe.benchmarks.sort.retrieval import (
    PassageIndex,
    chunk_words,
    passages_text,
    tokenize,
)
from mindprobe.errors import UsageError


def test_chunking_covers_the_text():
    words = [f"w{i}" for i in range(450)]
    passages = chunk_words(words, 200)
    assert [(p.start, p.end) for p in passages] == [(0, 200), (200, 400), (400, 450)]
    overlapping = chunk_words(words, 200, 100)
    assert overlapping[-1].end == 450 and overlapping[1].start == 100
    assert [(p.start, p.end) for p in chunk_words(words[:5], 200)] == [(0, 5)]
    with pytest.raises(UsageError):
        chunk_words(words, 0)


def test_bm25_finds_each_segment(books):
    words = books[73017].words
    index = PassageIndex(words, size=200)
    seg1 = "*" + " ".join(words[1000:1020]) + "*"
    seg2 = " ".join(words[7000:7020])
    assert tokenize(seg1)[0] == words[1000].lower().strip(",.;:")
    best = index.search(seg1, k=1)[0][0]
    assert best.start <= 1000 < best.end
    pair = index.for_pair(seg1, seg2, k=2)
    assert len({p.start for p in pair}) == len(pair) <= 4
    assert any(p.start <= 7000 < p.end for p in pair)
    block = passages_text(pair)
    assert block.startswith("*") and block.endswith("*\n\n")
