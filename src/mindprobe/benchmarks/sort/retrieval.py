"""Retrieval condition for SORT: BM25 passages of the book instead of the excerpt.

The paper also tested retrieval-augmented generation but released no code for it, so this is
mindprobe's own minimal version: the book is cut into fixed-size word windows, each segment
is a BM25 query (``rank_bm25.BM25Okapi`` with its defaults k1=1.5, b=0.75, epsilon=0.25 —
the variant mindprobe uses elsewhere), and the top-k passages per segment are merged.
Passages are ordered by score, not by position: book order would reveal the answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from mindprobe.errors import UsageError

_TOKEN = re.compile(r"\w+")
PASSAGE_WORDS = 200
TOP_K = 3


@dataclass(frozen=True)
class Passage:
    """Words [start, end) of the book, joined by single spaces."""

    start: int
    end: int
    text: str


def tokenize(text: str) -> list[str]:
    """Lowercased word tokens (punctuation and the published ``*`` wrapping dropped)."""
    return _TOKEN.findall(text.lower())


def chunk_words(words: Sequence[str], size: int = PASSAGE_WORDS,
                stride: int | None = None) -> list[Passage]:
    """Windows of ``size`` words every ``stride`` words (default: no overlap)."""
    stride = size if stride is None else stride
    if size < 1 or stride < 1:
        raise UsageError(f"passage size and stride must be >= 1 (got {size}, {stride})")
    out = []
    for start in range(0, max(1, len(words) - size + stride), stride):
        end = min(len(words), start + size)
        out.append(Passage(start, end, " ".join(words[start:end])))
        if end == len(words):
            break
    return out


class PassageIndex:
    """BM25 index over one book's passages."""

    def __init__(self, words: Sequence[str], size: int = PASSAGE_WORDS,
                 stride: int | None = None) -> None:
        from rank_bm25 import BM25Okapi

        self.passages = chunk_words(words, size, stride)
        self._bm25 = BM25Okapi([tokenize(p.text) for p in self.passages])

    def search(self, query: str, k: int = TOP_K) -> list[tuple[Passage, float]]:
        """Top-k passages for a query, best first (ties: earlier passage first)."""
        scores = self._bm25.get_scores(tokenize(query))
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:k]
        return [(self.passages[i], float(scores[i])) for i in order]

    def for_pair(self, segment_1: str, segment_2: str, k: int = TOP_K) -> list[Passage]:
        """Union of each segment's top-k, by descending score (never by book position)."""
        hits = self.search(segment_1, k) + self.search(segment_2, k)
        seen: set[int] = set()
        out = []
        for passage, _ in sorted(hits, key=lambda h: -h[1]):
            if passage.start not in seen:
                seen.add(passage.start)
                out.append(passage)
        return out


def passages_text(passages: Sequence[Passage]) -> str:
    """Passages as one context block, each published-style ``*…*`` and blank-line separated."""
    return "".join(f"*{p.text}*\n\n" for p in passages)
