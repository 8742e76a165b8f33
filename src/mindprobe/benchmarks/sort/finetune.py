"""The long-term-memory training corpus (spec §6): the books cut into ~5,000-word chunks, each
wrapped as a chat (system + user message with upstream's pre-excerpt wording, no assistant
turn), ready for a supervised fine-tuning tool.

Chunks are cut from each book's cleaned text *with* its chapter headings (the evaluation text
drops them). Two chunking rules:

* ``sentence`` (default): a chunk closes at the first sentence end at or after ``size`` words,
  and the next chunk starts right after it — every chunk but a book's last ends at a sentence
  end and no word is lost.
* ``upstream``: the paper's notebook exactly: once ``size`` words are reached the chunk grows
  up to, *not including*, the next word containing ``.``, ``!`` or ``?``; that word and the whole
  following sentence are skipped (so chunks stop one word short of their sentence end, and one
  sentence is lost between chunks).

Either way a book's remainder (fewer than ``size`` words) is its last chunk, as in the paper
(``--tail`` can merge it into the previous chunk or drop it).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mindprobe.benchmarks.sort.preprocess import Book, BookSpec
from mindprobe.benchmarks.sort.prompts import fill_labels, render_pre_excerpt
from mindprobe.benchmarks.sort.upstream import PromptConfig
from mindprobe.core.files import check_target, write_file
from mindprobe.errors import DataError, UsageError

RULES = ("sentence", "upstream")
RULE_TEXT = {
    "sentence": "a chunk closes at the first sentence end (a word containing . ! or ?, not "
                "Mr./Mrs./Dr.) at or after the size; the next starts right after it",
    "upstream": "the paper's notebook: at the size, grow up to (not including) the next word "
                "containing . ! or ?; skip that word and the following sentence",
}
TAILS = ("keep", "merge", "drop")
DEFAULT_HELD_OUT = (72963,)
DEFAULT_SIZE = 5000
DEFAULT_PROMPT = "prompt_1"  # the first Pb configuration: upstream's notebook used its wording
#: Chunks per book in the paper (spec §6), for the comparison the export prints.
PAPER_CHUNKS: dict[int, int] = {69087: 14, 72578: 10, 72600: 13, 72869: 17, 72958: 10,
                                73042: 33, 72972: 17, 73017: 2}
_END = (".", "!", "?")
_NOT_AN_END = ("mr.", "mrs.", "dr.")  # Book-SORT's sentence-marker exceptions (spec §3.3)
VERSION = 1


def has_end_mark(word: str) -> bool:
    """Upstream's test: the word contains ``.``, ``!`` or ``?`` anywhere."""
    return any(p in word for p in _END)


def ends_sentence(word: str) -> bool:
    """A sentence end: an end mark, but not the titles Book-SORT also exempts (``Mr.``)."""
    return has_end_mark(word) and word.lower() not in _NOT_AN_END


def words_with_headings(book: Book, spec: BookSpec | None) -> list[str]:
    """The book's words with chapter headings kept.

    Where the chapter split string is itself a word (``CHAPTER``) it was consumed by the split,
    so it is put back in front of each chapter: the heading reads as in the book.
    """
    marker = spec.split_str.split() if spec is not None else []
    out: list[str] = []
    for chapter in book.chapters or [book.words]:
        out += marker + chapter
    return out


def chunk_spans(words: Sequence[str], size: int = DEFAULT_SIZE, rule: str = "sentence"
                ) -> list[tuple[int, int]]:
    """(start, stop) word spans of the chunks of one text, in order."""
    if rule not in RULES:
        raise UsageError(f"unknown chunking rule {rule!r}; choose {' or '.join(RULES)}")
    if size < 1:
        raise UsageError("the chunk size must be a positive number of words")
    n, spans, start = len(words), [], 0
    while start < n:
        stop = start + size
        if stop >= n:
            spans.append((start, n))
            break
        if rule == "sentence":
            while stop < n and not ends_sentence(words[stop - 1]):
                stop += 1
            spans.append((start, stop))
            start = stop
            continue
        while stop < n and not has_end_mark(words[stop]):
            stop += 1
        spans.append((start, stop))
        nxt = stop
        while nxt < n and has_end_mark(words[nxt]):
            nxt += 1
        while nxt < n and not has_end_mark(words[nxt]):
            nxt += 1
        start = nxt + 1
    return spans


def apply_tail(spans: list[tuple[int, int]], size: int, tail: str) -> list[tuple[int, int]]:
    """What becomes of a short last chunk: kept (the paper), merged into the previous, dropped."""
    if tail not in TAILS:
        raise UsageError(f"unknown --tail {tail!r}; choose {', '.join(TAILS)}")
    if tail == "keep" or not spans or spans[-1][1] - spans[-1][0] >= size:
        return spans
    if tail == "drop":
        return spans[:-1]
    if len(spans) == 1:
        return spans
    (a, _), (_, b) = spans[-2], spans[-1]
    return [*spans[:-2], (a, b)]


@dataclass
class CorpusOptions:
    """How the corpus is cut and worded (all recorded in the provenance sidecar)."""

    size: int = DEFAULT_SIZE
    rule: str = "sentence"
    tail: str = "keep"
    held_out: tuple[int, ...] = DEFAULT_HELD_OUT
    task_type: str = "first"
    titles: dict[int, str] = field(default_factory=dict)


@dataclass
class BookChunks:
    """One book's chunks and what the provenance says about it."""

    book: Book
    title: str
    words: list[str]
    spans: list[tuple[int, int]]
    source_sha256: str | None


def chunk_books(books: Sequence[Book], specs: dict[int, BookSpec], opts: CorpusOptions
                ) -> list[BookChunks]:
    """Every book not held out, cut into chunks."""
    out = []
    for book in books:
        if book.book_idx in opts.held_out:
            continue
        spec = specs.get(book.book_idx)
        words = words_with_headings(book, spec)
        spans = apply_tail(chunk_spans(words, opts.size, opts.rule), opts.size, opts.tail)
        out.append(BookChunks(book, opts.titles.get(book.book_idx, book.book_title), words,
                              spans, spec.source_sha256 if spec else None))
    return out


def records(chunked: Sequence[BookChunks], prompt: PromptConfig, opts: CorpusOptions
            ) -> Iterator[dict[str, Any]]:
    """One training record per chunk: ``messages`` (system + user), ids and sizes."""
    system = fill_labels(prompt.system_prompt.replace("<tasktype>", opts.task_type))
    for bc in chunked:
        for k, (a, b) in enumerate(bc.spans):
            text = " ".join(bc.words[a:b])
            user = fill_labels(render_pre_excerpt(prompt, bc.title, text, opts.task_type))
            yield {"messages": [{"role": "system", "content": system},
                                {"role": "user", "content": user}],
                   "book_id": bc.book.book_idx, "title": bc.title, "chunk_index": k,
                   "n_words": b - a}


def counts_table(chunked: Sequence[BookChunks], opts: CorpusOptions) -> list[dict[str, Any]]:
    """Per book: our chunk count beside the paper's, and the words the chunks hold."""
    rows = []
    for bc in chunked:
        sizes = [b - a for a, b in bc.spans]
        paper = PAPER_CHUNKS.get(bc.book.book_idx)
        rows.append({"book_id": bc.book.book_idx, "words": len(bc.words), "chunks": len(sizes),
                     "paper_chunks": paper,
                     "difference": None if paper is None else len(sizes) - paper,
                     "last_chunk_words": sizes[-1] if sizes else 0,
                     "words_skipped": len(bc.words) - sum(sizes)})
    return rows


def provenance(chunked: Sequence[BookChunks], prompt: PromptConfig, opts: CorpusOptions,
               n_records: int, template: dict[str, Any] | None) -> dict[str, Any]:
    """The SOURCE sidecar: what the corpus was made of and how, enough to rebuild it."""
    from mindprobe.benchmarks.sort.preprocess import sha256_text
    from mindprobe.version import __version__

    return {
        "what": "SORT long-term-memory fine-tuning corpus (spec §6; Pink et al. 2024)",
        "mindprobe_version": __version__, "corpus_version": VERSION,
        "rule": {"name": opts.rule, "size_words": opts.size, "tail": opts.tail,
                 "text": "cleaned Book-SORT text with chapter headings kept",
                 "description": RULE_TEXT[opts.rule],
                 "last_chunk": {"keep": "a book's remainder is its last chunk",
                                "merge": "a short remainder is merged into the chunk before",
                                "drop": "a short remainder is dropped"}[opts.tail]},
        "held_out": list(opts.held_out), "task_type": opts.task_type,
        "prompt": {"name": prompt.name, "upstream_file": Path(prompt.path).name,
                   "sha256": prompt.sha256, "fields": ["system_prompt", "pre_excerpt"]},
        "chat_template": template,
        "n_records": n_records,
        "books": [{"book_id": bc.book.book_idx, "title": bc.title,
                   "source_sha256": bc.source_sha256,
                   "text_with_headings_sha256": sha256_text(" ".join(bc.words)),
                   "n_words": len(bc.words), "n_chunks": len(bc.spans)} for bc in chunked],
    }


def write_jsonl(path: Path, rows: Iterator[dict[str, Any]], replace: bool = True,
                flag: str | None = None) -> int:
    """Write records atomically (a partial file never replaces a good one, `core.files`; an
    existing one only with `replace`); returns the count."""
    n = 0

    def lines() -> Iterator[str]:
        nonlocal n
        for row in rows:
            yield json.dumps(row, ensure_ascii=False) + "\n"
            n += 1

    write_file(path, lines(), replace=replace, flag=flag)
    return n


@dataclass
class CorpusExport:
    """What an export wrote: the records file, its SOURCE sidecar and the per-book counts."""

    path: Path
    source_path: Path
    n_records: int
    counts: list[dict[str, Any]]


def sidecar_path(out: Path) -> Path:
    """``corpus.jsonl`` -> ``corpus.source.json`` (provenance next to the records)."""
    return out.with_name(out.name.removesuffix(".jsonl") + ".source.json")


def export_corpus(data_dir: Path | None, out: Path, opts: CorpusOptions,
                  prompt_name: str = DEFAULT_PROMPT, chat_template: str | None = None,
                  replace: bool = True) -> CorpusExport:
    """Chunk the books, render each chunk with the upstream prompt, write JSONL + sidecar
    (existing ones replaced only with `replace`)."""
    from mindprobe.benchmarks.sort import sources
    from mindprobe.benchmarks.sort.preprocess import BOOK_ORDER, load_specs
    from mindprobe.benchmarks.sort.upstream import load_config

    root = sources.books_root(data_dir)
    unknown = sorted(set(opts.held_out) - set(BOOK_ORDER))
    if unknown:
        raise UsageError(f"--held-out: unknown book id(s) {unknown}; Book-SORT's are "
                         f"{', '.join(map(str, BOOK_ORDER))}")
    bad_titles = sorted(set(opts.titles) - set(BOOK_ORDER))
    if bad_titles:
        raise UsageError(f"--title: unknown book id(s) {bad_titles}")
    kept = [b for b in BOOK_ORDER if b not in opts.held_out]
    if not kept:
        raise UsageError("--held-out names every book; nothing is left to train on")
    prompt = load_config(prompt_name, data_dir)
    if "<excerpt>" not in prompt.pre_excerpt:
        raise DataError(f"{prompt.path}: its pre_excerpt has no <excerpt> slot")
    template = None
    if chat_template:
        from mindprobe.core.chat_template import load_chat_template

        template = load_chat_template(chat_template)
    books = sources.load_source_books(root, kept)
    specs = {s.book_idx: s for s in load_specs(root)}
    chunked = chunk_books(books, specs, opts)
    rows = records(chunked, prompt, opts)
    if template is not None:
        rows = ({**r, "text": template.render(r["messages"])} for r in rows)
    source = sidecar_path(out)
    check_target(source, replace=replace, flag="--out")  # both refused before either is written
    n = write_jsonl(out, rows, replace=replace, flag="--out")
    meta = provenance(chunked, prompt, opts, n,
                      template.describe() if template is not None else None)
    write_file(source, json.dumps(meta, indent=2, ensure_ascii=False) + "\n", replace=True,
               flag="--out")
    return CorpusExport(out, source, n, counts_table(chunked, opts))
