"""Book-SORT text preprocessing (spec §2): Gutenberg file → one flat list of words per book.

The published Book-SORT rows index into these word lists, so every quirk of the upstream
cleaning (glued words, the roman-numeral deletion that eats letters) is reproduced on purpose
and checked against the sha256 values in ``booksort_preprocess.json``. A generic
:func:`preprocess_text` path covers a user's own plain text, where no such quirks apply.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mindprobe.core.data import file_sha256 as sha256_file
from mindprobe.errors import DataError, UsageError

PREPROCESS_JSON = "booksort_preprocess.json"

# sha256 of the verbatim Gutenberg files (shared/data/sort/SOURCE.md); a mismatch means a
# different Gutenberg revision, whose word offsets would not match the published rows.
SOURCE_SHA256: dict[int, str] = {
    69087: "2a70d43101c6595836701fe1999044d3ff1019e32018f4c05ce2395a40c97b5f",
    72578: "a2a403fbe84128c65ce95272cf05978513b0af7586d84b9cc679e9cef813e3f0",
    72600: "7c7399c3f0e281f4197e3e7ad12f2d9473ed60533899e1fb1a30536532dd1907",
    72869: "36d93aae00ac53bc3b1ddaa6c8fb18dcfb2bcf8f18f72303b1f40b8521fc5289",
    72958: "3b1c9899975a07c4dc0ffc410caa2e10b58887737eaa207446be76e505dffffb",
    72963: "d8208a79079fa7b796954db9561e36ceca5d209cd0abe4c2d91966f69880a12b",
    72972: "0328277bae6f4a0461dca5a15b434f7694580665cee9be70753471fefa1de918",
    73017: "373a50766de9ad710a6dc4d2259f43dd05c00b5434507e059dc6e4a998efbd09",
    73042: "41c1aee3c6638c3bca885747418a4b329d08b77b50eb6b5f011cea4d53897bf8",
}

BOOK_ORDER: tuple[int, ...] = (69087, 72578, 72600, 72869, 72958, 72963, 72972, 73017, 73042)

_ROMAN = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII", "XIII",
          "XIV", "XV")
_TITLE_RE = re.compile(r"EBOOK(.*)\*\*\*")
_PG_START = re.compile(r"^\*\*\* ?START OF (THE|THIS) PROJECT GUTENBERG.*$", re.M)
_PG_END = re.compile(r"^\*\*\* ?END OF (THE|THIS) PROJECT GUTENBERG.*$", re.M)


@dataclass(frozen=True)
class BookSpec:
    """One book's preprocessing parameters (a ``books`` entry of booksort_preprocess.json)."""

    book_idx: int
    file: str
    split_str: str
    keep_pieces: tuple[int, int]
    n_chapters: int
    end_regex: str | None
    chapter_titles: tuple[str, ...] | None
    heading_rule: str
    expect: dict[str, Any] = field(default_factory=dict, compare=False)
    source_sha256: str | None = None  # JSON ``source_sha256``, else SOURCE_SHA256[book_idx]


@dataclass
class Book:
    """A cleaned text: ``words`` is the array that excerpt/segment offsets index into."""

    book_idx: int
    book_title: str
    num_words: int
    words: list[str]
    title_raw: str = ""
    chapter_word_counts: list[int] = field(default_factory=list)
    # sha256 of the space-joined words *before* heading removal (the JSON's
    # ``sha256_words_joined``); the final text's hash is ``sha256_text_joined``.
    words_with_headings_sha256: str = ""
    #: Each chapter's words before heading removal (the fine-tuning corpus keeps headings).
    chapters: list[list[str]] = field(default_factory=list, repr=False)

    @property
    def text(self) -> str:
        """The cleaned text as single-space-joined words."""
        return " ".join(self.words)




def sha256_text(text: str) -> str:
    """Hex sha256 of a string's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load_specs(data_dir: str | Path) -> list[BookSpec]:
    """Read booksort_preprocess.json from the Book-SORT data folder (spec §2 parameters)."""
    path = Path(data_dir) / PREPROCESS_JSON
    if not path.is_file():  # the facts ship with mindprobe; a data folder may override them
        path = Path(__file__).with_name(PREPROCESS_JSON)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise DataError(f"{path}: not found; point --data at shared/data/sort") from exc
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: cannot read JSON ({exc})") from exc
    specs = []
    for i, entry in enumerate(raw.get("books", [])):
        try:
            titles = entry.get("chapter_titles")
            specs.append(BookSpec(
                book_idx=int(entry["book_idx"]), file=str(entry["file"]),
                split_str=str(entry["split_str"]),
                keep_pieces=(int(entry["keep_pieces"][0]), int(entry["keep_pieces"][1])),
                n_chapters=int(entry["n_chapters"]), end_regex=entry.get("end_regex"),
                chapter_titles=tuple(titles) if titles else None,
                heading_rule=str(entry["heading_rule"]), expect=dict(entry.get("expect", {})),
                source_sha256=entry.get("source_sha256",
                                        SOURCE_SHA256.get(int(entry["book_idx"]))),
            ))
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise DataError(f"{path}: books[{i}] is malformed ({exc!r})") from exc
    if not specs:
        raise DataError(f"{path}: no 'books' entries")
    return specs


def _match_titles(pieces: list[str], titles: tuple[str, ...]) -> list[str]:
    """Assign pieces to titles; a piece not matching the current title joins the previous one.

    After the first miss the title is searched with a trailing newline so that a heading line
    matches but a mention in running text does not (spec §2 step 4b; glue has no separator).
    """
    chapters: list[str] = []
    j, missed = 0, False
    for piece in pieces:
        if j < len(titles):
            pattern = titles[j]
            if missed:
                pattern += "\n"
            if re.search(pattern, piece, re.IGNORECASE):
                chapters.append(piece)
                j += 1
                continue
        if not chapters:
            chapters.append(piece)
            continue
        chapters[-1] += piece
        missed = True
    return chapters


def _fix_two_chapter_piece(pieces: list[str]) -> list[str]:
    """Book 72963: piece 0 holds chapters I and II (spec §2 step 4a)."""
    parts = pieces[0].split("\n\n\n")
    if len(parts) != 6:
        raise DataError(f"72963: expected 6 parts in the first piece, found {len(parts)}")
    first = parts[0] + "\n" + parts[1]
    second = parts[2][1:] + "\n" + parts[3] + parts[4] + parts[5]
    return [first, second, *pieces[1:]]


def _drop_heading(words: list[str], spec: BookSpec, chapter: int, title_raw: str) -> list[str]:
    """Remove one chapter's heading words per the book's heading_rule (spec §2 step 7)."""
    rule = spec.heading_rule
    if rule == "chapter_titles":
        assert spec.chapter_titles is not None
        title = spec.chapter_titles[chapter].split()
        last = title[-1].lower()
        hits = [i for i in range(min(len(title) + 5, len(words))) if words[i].lower() == last]
        return words[hits[-1] + 1:] if hits else words
    if rule == "numeric_or_roman":
        numeric = [i for i, w in enumerate(words[:5]) if w.isnumeric()]
        if numeric:
            return words[numeric[-1] + 1:]
        text = " ".join(words[2:])
        for numeral in _ROMAN:
            at = text.find(numeral)
            if at < 0:
                break
            text = text[:at] + text[at + len(numeral):]
        return text.split()
    if rule == "title_words":
        return words[len(title_raw.split()):]
    raise DataError(f"book {spec.book_idx}: unknown heading_rule {rule!r}")


def book_title_of(raw: str) -> tuple[str, str]:
    """(raw title, displayed title) from the Gutenberg ``*** START … EBOOK <title> ***`` line."""
    match = _TITLE_RE.search(raw)
    title_raw = match.group(1).strip() if match else ""
    return title_raw, title_raw.title()


def clean_book(raw: str, spec: BookSpec) -> Book:
    """Apply spec §2 steps 2–7 to a file's text (already decoded, LF newlines)."""
    title_raw, title = book_title_of(raw)
    start, stop = spec.keep_pieces
    pieces = [p.strip() for p in raw.split(spec.split_str)[start:stop]]
    if len(pieces) > spec.n_chapters:
        if spec.chapter_titles is None:
            raise DataError(f"book {spec.book_idx}: {len(pieces)} pieces for "
                            f"{spec.n_chapters} chapters and no chapter_titles to merge them")
        if spec.book_idx == 72963:
            pieces = _fix_two_chapter_piece(pieces)
        pieces = _match_titles(pieces, spec.chapter_titles)
    if spec.end_regex:
        match = re.search(spec.end_regex, pieces[-1])
        if match:
            pieces[-1] = pieces[-1][:match.start()].strip()
    chapter_words = [p.split() for p in pieces]
    words: list[str] = []
    for k, chapter in enumerate(chapter_words):
        words.extend(_drop_heading(chapter, spec, k, title_raw))
    counts = [len(w) for w in chapter_words]
    with_headings = sha256_text(" ".join(" ".join(w) for w in chapter_words if w))
    return Book(book_idx=spec.book_idx, book_title=title, num_words=sum(counts), words=words,
                title_raw=title_raw, chapter_word_counts=counts,
                words_with_headings_sha256=with_headings, chapters=chapter_words)


def _verify(book: Book, spec: BookSpec, path: Path) -> None:
    """Compare with the JSON's expected values; DataError names the file and what differs."""
    exp = spec.expect
    checks = [
        ("book_title", book.book_title, exp.get("book_title")),
        ("num_words", book.num_words, exp.get("num_words")),
        ("chapter_word_counts", book.chapter_word_counts, exp.get("chapter_word_counts")),
        ("text_words", len(book.words), exp.get("text_words")),
    ]
    if exp.get("sha256_words_joined"):
        checks.append(("sha256_words_joined", book.words_with_headings_sha256,
                       exp["sha256_words_joined"]))
    if exp.get("sha256_text_joined"):
        checks.append(("sha256_text_joined", sha256_text(book.text), exp["sha256_text_joined"]))
    for name, got, want in checks:
        if want is not None and got != want:
            raise DataError(f"{path}: cleaned text differs from {PREPROCESS_JSON} "
                            f"({name}: got {got!r}, expected {want!r})")


def read_gutenberg_file(path: Path) -> str:
    """UTF-8 with universal newlines; the BOM is kept (it lies in discarded front matter)."""
    try:
        with open(path, encoding="utf-8", newline=None) as handle:
            return handle.read()
    except FileNotFoundError as exc:
        raise DataError(f"{path}: book text not found") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: cannot read as UTF-8 ({exc})") from exc


def preprocess_book(spec: BookSpec, data_dir: str | Path, verify: bool = True) -> Book:
    """Load and clean one book; with ``verify`` check source and result against the JSON."""
    path = Path(data_dir) / spec.file
    if verify and spec.source_sha256:
        if not path.is_file():
            raise DataError(f"{path}: book text not found")
        got = sha256_file(path)
        if got != spec.source_sha256:
            raise DataError(f"{path}: sha256 {got} differs from the Book-SORT source "
                            f"{spec.source_sha256} (a different Gutenberg revision?)")
    book = clean_book(read_gutenberg_file(path), spec)
    if verify:
        _verify(book, spec, path)
    return book


def load_books(data_dir: str | Path, book_ids: list[int] | None = None,
               verify: bool = True) -> list[Book]:
    """All (or the selected) Book-SORT books, in the JSON's order."""
    specs = load_specs(data_dir)
    known = {s.book_idx for s in specs}
    if book_ids is not None:
        unknown = sorted(set(book_ids) - known)
        if unknown:
            raise UsageError(f"unknown book id(s) {unknown}; known: {sorted(known)}")
        specs = [s for s in specs if s.book_idx in set(book_ids)]
    return [preprocess_book(s, data_dir, verify=verify) for s in specs]


def preprocess_text(text: str, title: str | None = None, book_idx: int = 0) -> Book:
    """A user's own plain text: strip Gutenberg boilerplate when present, split on whitespace.

    No chapter-heading removal is attempted (there are no per-text parameters), so headings
    stay in the text as ordinary words.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    if title is None:
        title = book_title_of(text)[1] or "Untitled"
    start, end = _PG_START.search(text), _PG_END.search(text)
    if start:
        text = text[start.end():end.start() if end and end.start() > start.end() else None]
    words = text.split()
    if not words:
        raise DataError(f"text {title!r} contains no words")
    return Book(book_idx=book_idx, book_title=title, num_words=len(words), words=words,
                title_raw=title, chapter_word_counts=[len(words)], chapters=[words])
