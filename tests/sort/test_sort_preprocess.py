"""Book preprocessing (spec §2): verified word counts, hashes and the reproduced quirks."""

from __future__ import annotations

import json
import shutil

import pytest

from mindprobe.benchmarks.sort.preprocess import (
    BOOK_ORDER,
    load_books,
    load_specs,
    preprocess_book,
    preprocess_text,
    sha256_text,
)
from mindprobe.errors import DataError, UsageError

TEXT_WORDS = {69087: 69607, 72578: 43742, 72600: 58970, 72869: 79849, 72958: 42236,
              72963: 104461, 72972: 82250, 73017: 9267, 73042: 163105}
NUM_WORDS = {69087: 69720, 72578: 43853, 72600: 59081, 72869: 79946, 72958: 42354,
             72963: 104530, 72972: 82331, 73017: 9273, 73042: 163217}


def test_every_book_matches_the_json(books, sort_data):
    specs = {s.book_idx: s for s in load_specs(sort_data)}
    assert tuple(specs) == BOOK_ORDER
    for book_idx, book in books.items():
        exp = specs[book_idx].expect
        assert len(book.words) == TEXT_WORDS[book_idx] == exp["text_words"]
        assert book.num_words == NUM_WORDS[book_idx] == exp["num_words"]
        assert book.chapter_word_counts == exp["chapter_word_counts"]
        assert sha256_text(book.text) == exp["sha256_text_joined"]
        assert book.words_with_headings_sha256 == exp["sha256_words_joined"]
        assert " ".join(book.words[:8]) == exp["text_first_words"]
        assert book.book_title == exp["book_title"]


def test_titles_and_reproduced_quirks(books):
    assert books[69087].book_title == "The Murder Of Roger Ackroyd"
    assert books[73017].book_title == "Pomona; Or, The Future Of English"
    eddington = set(books[72963].words)
    assert {"Line.When", "streams;World-losers", "seems.Reality"} <= eddington
    assert books[72972].words[:6] == ["The", "picturesque", "village", "of",
                                      "Rudge-in-the-ale", "dozed"]
    assert books[73017].words[0] == "Before"  # six title words dropped


def test_source_hash_mismatch_names_the_file(tmp_path, sort_data):
    spec = next(s for s in load_specs(sort_data) if s.book_idx == 73017)
    (tmp_path / "pg" / "full_text").mkdir(parents=True)
    copy = tmp_path / spec.file
    shutil.copy(sort_data / spec.file, copy)
    copy.chmod(0o644)
    with open(copy, "a", encoding="utf-8") as handle:
        handle.write("\nextra line\n")
    with pytest.raises(DataError, match=r"73017-0\.txt: sha256 .* differs"):
        preprocess_book(spec, tmp_path)
    book = preprocess_book(spec, tmp_path, verify=False)  # trailing text is cut anyway
    assert len(book.words) == 9267


def test_expected_values_mismatch_says_what_differs(tmp_path, sort_data):
    raw = json.loads((sort_data / "booksort_preprocess.json").read_text(encoding="utf-8"))
    entry = next(b for b in raw["books"] if b["book_idx"] == 73017)
    entry["expect"]["text_words"] = 1
    entry["file"] = str(sort_data / entry["file"])
    raw["books"] = [entry]
    (tmp_path / "booksort_preprocess.json").write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(DataError, match="text_words: got 9267, expected 1"):
        load_books(tmp_path)


def test_unknown_book_id(sort_data):
    with pytest.raises(UsageError, match="unknown book id"):
        load_books(sort_data, [1])


def test_plain_text_path():
    text = ("\ufeffHeader\r\n*** START OF THE PROJECT GUTENBERG EBOOK MY TALE ***\r\n"
            "Once upon a time.\r\nThe end.\r\n*** END OF THE PROJECT GUTENBERG EBOOK MY TALE ***"
            "\r\nlicence")
    book = preprocess_text(text)
    assert book.book_title == "My Tale"
    assert book.words == ["Once", "upon", "a", "time.", "The", "end."]
    plain = preprocess_text("just some words", title="Mine", book_idx=7)
    assert (plain.book_idx, plain.num_words, plain.book_title) == (7, 3, "Mine")
    with pytest.raises(DataError, match="no words"):
        preprocess_text("   \n ")
