"""The reference chunker (spec §4), quirks included, so retrieval sees the paper's chunks.

Quirks kept on purpose: every piece gets its separator re-appended, the separator is cut from
the last chunk unconditionally (even a chunk produced by a deeper recursion level, whose own
separator was already cut), and past the last separator the text is hard-sliced.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

DEFAULT_SEPS: tuple[str, ...] = ("\n\n", "\n", ". ", ", ", " ")
LIBRARY_CHUNK_SIZE = 2048  # upstream library default
PAPER_CHUNK_SIZE = 1024  # what the paper's evidence-provided and open-book runs used


def chunk_text(
    text: str, max_len: int, seps: Sequence[str] = DEFAULT_SEPS, level: int = 0
) -> list[str]:
    """Split ``text`` into chunks of at most ``max_len`` characters, spec §4 steps 1-4."""
    if len(text) <= max_len:
        return [text]
    if level >= len(seps):
        return [text[:max_len], *chunk_text(text[max_len:], max_len, seps, level + 1)]
    sep = seps[level]
    out: list[str] = []
    for piece in text.split(sep):
        piece += sep
        if len(piece) > max_len:
            out.extend(chunk_text(piece, max_len, seps, level + 1))
        elif out and len(piece) + len(out[-1]) <= max_len:
            out[-1] += piece
        else:
            out.append(piece)
    if out and out[-1] == sep:
        out.pop()
    if out:  # upstream would raise IndexError on an empty list; unreachable for len > max_len
        out[-1] = out[-1][: -len(sep)]
    return out


@dataclass(frozen=True)
class Chunk:
    """A retrieval unit: one chunk of one page, remembering the page title for rendering."""

    title: str
    content: str


def chunk_pages(pages: Iterable[tuple[str, str]], max_len: int = PAPER_CHUNK_SIZE) -> list[Chunk]:
    """Corpus over (title, markdown) pages in order; duplicated pages are chunked twice."""
    return [Chunk(title, c) for title, text in pages for c in chunk_text(text, max_len)]
