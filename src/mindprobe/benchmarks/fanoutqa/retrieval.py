"""BM25+ chunk ranking and the greedy token-budget fill (spec §2, §4).

The scorer re-implements rank_bm25's ``BM25Plus`` arithmetic operation for operation (same
idf via ``math.log``, same float expression order), so scores are bit-identical and the order
``numpy.argsort(scores)[::-1]`` - ties included - matches the paper's runs without the dependency.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np

from .chunking import Chunk
from .normalize import Normalizer

T = TypeVar("T")
K1, B, DELTA = 1.5, 0.75, 1.0  # rank_bm25 BM25Plus defaults

CountTokens = Callable[[str], int]


def tokenize(normalized: str) -> list[str]:
    """Split a normalised text on single spaces; empty tokens are kept (spec §4)."""
    return normalized.split(" ")


class BM25Plus:
    """rank_bm25.BM25Plus(k1=1.5, b=0.75, delta=1), same floating-point results."""

    def __init__(
        self, corpus: Sequence[Sequence[str]], k1: float = K1, b: float = B, delta: float = DELTA
    ):
        if not corpus:
            raise ValueError("BM25Plus needs at least one document")
        self.k1, self.b, self.delta = k1, b, delta
        self.corpus_size = len(corpus)
        self.doc_freqs = [Counter(doc) for doc in corpus]
        self.doc_len = np.array([len(doc) for doc in corpus])
        self.avgdl = sum(len(doc) for doc in corpus) / self.corpus_size
        df: Counter[str] = Counter()
        for freqs in self.doc_freqs:
            df.update(freqs.keys())
        self.idf = {w: math.log((self.corpus_size + 1) / n) for w, n in df.items()}

    def get_scores(self, query: Sequence[str]) -> np.ndarray:
        score = np.zeros(self.corpus_size)
        k1, b, delta, doc_len, avgdl = self.k1, self.b, self.delta, self.doc_len, self.avgdl
        for q in query:
            q_freq = np.array([(doc.get(q) or 0) for doc in self.doc_freqs])
            score += (self.idf.get(q) or 0) * (
                delta + (q_freq * (k1 + 1)) / (k1 * (1 - b + b * doc_len / avgdl) + q_freq)
            )
        return score

    def rank(self, query: Sequence[str]) -> np.ndarray:
        """Indices best-first: argsort ascending, reversed (the paper's tie order)."""
        return np.argsort(self.get_scores(query))[::-1]


def rank_chunks(chunks: Sequence[Chunk], query: str, normalizer: Normalizer) -> list[Chunk]:
    """Rank chunks by BM25+ against ``query`` (the question text), both normalised (§6.1)."""
    if not chunks:
        return []
    docs = normalizer.normalize_many([c.content for c in chunks])
    bm25 = BM25Plus([tokenize(d) for d in docs])
    return [chunks[i] for i in bm25.rank(tokenize(normalizer(query)))]


def greedy_fill(
    items: Sequence[T],
    render: Callable[[list[T]], str],
    count_tokens: CountTokens,
    budget: int,
) -> tuple[list[T], str]:
    """Keep items in order while ``count_tokens(render(kept + [next])) <= budget``.

    The first item that overflows ends the loop: later, smaller items are *not* tried (the
    paper's behaviour). Returns the kept items and ``render(kept)``.
    """
    kept: list[T] = []
    for item in items:
        if count_tokens(render([*kept, item])) > budget:
            break
        kept.append(item)
    return kept, render(kept)


# -------------------------------------------------------------- token counting without a tokenizer

TOKEN_ESTIMATE_NAME = "estimate:max(pretokens,utf8_bytes/4)"
_PRETOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)


def estimate_tokens(text: str) -> int:
    """Conservative token estimate when the model's tokenizer is unavailable.

    BPE vocabularies give roughly 4 UTF-8 bytes per token on English prose but nearly one token
    per word/punctuation mark on digit- and symbol-heavy Wikipedia tables, so take the larger of
    the two. Results computed with it must say so (``TOKEN_ESTIMATE_NAME``): fills differ from
    a real tokenizer's.
    """
    return max(len(_PRETOKEN.findall(text)), math.ceil(len(text.encode("utf-8")) / 4))
