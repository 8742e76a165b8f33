"""The long-term-memory corpus: the paper's chunk counts, sentence ends, upstream's wording."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml

from mindprobe.benchmarks.sort.finetune import (
    PAPER_CHUNKS,
    apply_tail,
    chunk_spans,
    ends_sentence,
)
from mindprobe.benchmarks.sort.preprocess import SOURCE_SHA256

PROMPT_1 = "upstream/sort/evaluation/conf/prompts/prompt_1.yaml"


def _records(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, sort_data):
    from mindprobe.cli import main

    out = tmp_path_factory.mktemp("ft") / "corpus.jsonl"
    assert main(["export", "sort", "--finetune-corpus", "--books", str(sort_data),
                 "--out", str(out)]) == 0
    return out


def test_nine_books_give_the_papers_chunks(corpus, sort_data):
    recs = _records(corpus)
    assert 116 - 8 <= len(recs) <= 116 + 8
    per_book: dict[int, list[dict]] = {}
    for r in recs:
        per_book.setdefault(r["book_id"], []).append(r)
    assert 72963 not in per_book  # held out by default: the control book
    assert set(per_book) == set(PAPER_CHUNKS)
    for book, paper in PAPER_CHUNKS.items():
        assert abs(len(per_book[book]) - paper) <= 1, book
    upstream = yaml.safe_load((sort_data / PROMPT_1).read_text(encoding="utf-8"))
    head, _, tail = upstream["pre_excerpt"].partition("<excerpt>")
    for book, chunks in per_book.items():
        assert [c["chunk_index"] for c in chunks] == list(range(len(chunks)))
        for c in chunks:
            system, user = c["messages"]
            assert (system["role"], user["role"]) == ("system", "user")
            assert system["content"] == upstream["system_prompt"]
            prefix = head.replace("<booktitle>", c["title"])
            assert user["content"].startswith(prefix) and user["content"].endswith(tail)
            words = user["content"][len(prefix):len(user["content"]) - len(tail)].split()
            assert len(words) == c["n_words"]
            if c is not chunks[-1]:  # a book's remainder is its last, shorter chunk
                assert c["n_words"] >= 5000 and ends_sentence(words[-1]), (book, words[-3:])
    first = per_book[69087][0]["messages"][1]["content"]
    assert "CHAPTER I DR. SHEPPARD AT THE BREAKFAST TABLE Mrs. Ferrars" in first  # headings kept
    meta = json.loads(corpus.with_name("corpus.source.json").read_text())
    assert meta["n_records"] == len(recs) and meta["held_out"] == [72963]
    assert meta["prompt"]["name"] == "prompt_1" and meta["rule"]["name"] == "sentence"
    assert {b["book_id"]: b["source_sha256"] for b in meta["books"]} == {
        b: SOURCE_SHA256[b] for b in PAPER_CHUNKS}


#: Chunks per book in the output upstream's notebook printed (one token count per chunk, each
#: book's short remainder marking where the next book starts): 112 in all.
NOTEBOOK_CHUNKS = {69087: 14, 72578: 9, 72600: 12, 72869: 16, 72958: 9, 72972: 17, 73017: 2,
                   73042: 33}


def test_the_upstream_rule_reproduces_the_notebook(cli, tmp_path, sort_data):
    code, doc, err = cli("export", "sort", "--finetune-corpus", "--data-dir", sort_data,
                         "--out", tmp_path / "u.jsonl", "--chunk-rule", "upstream", "--json")
    assert code == 0, err
    assert {r["book_id"]: r["chunks"] for r in doc["chunks"]} == NOTEBOOK_CHUNKS
    assert all(r["words_skipped"] > 0 for r in doc["chunks"])  # a sentence lost per cut


def test_the_upstream_rule_stops_short_and_skips_a_sentence():
    words = ["a", "b", "c.", "d", "e!", "f", "g", "h?", "i", "j", "k.", "l", "m"]
    # size 2: 'a b' reached, stop before 'c.', skip 'c.' and the next sentence 'd e!'
    assert chunk_spans(words, 2, "upstream") == [(0, 2), (5, 7), (11, 13)]
    assert chunk_spans(words, 2, "sentence") == [(0, 3), (3, 5), (5, 8), (8, 11), (11, 13)]
    assert not ends_sentence("Mr.") and ends_sentence("St.") and ends_sentence("“Why?”")
    assert apply_tail([(0, 5), (5, 7)], 5, "merge") == [(0, 7)]
    assert apply_tail([(0, 5), (5, 7)], 5, "drop") == [(0, 5)]
    assert apply_tail([(0, 5), (5, 7)], 5, "keep") == [(0, 5), (5, 7)]


def test_chat_template_options_and_title(cli, tmp_path, sort_data):
    config = tmp_path / "tokenizer_config.json"
    config.write_text(json.dumps({"bos_token": {"content": "<s>"}, "chat_template":
                      "{{ bos_token }}{% for m in messages %}[{{ m['role'] }}]{{ m['content'] }}"
                      "{% endfor %}{% if add_generation_prompt %}[assistant]{% endif %}"}))
    out = tmp_path / "c.jsonl"
    code, doc, err = cli("export", "sort", "--finetune-corpus", "--books", sort_data, "--out",
                         out, "--held-out", "69087,72578,72600,72869,72958,72963,72972,73042",
                         "--chunk-words", 3000, "--tail", "merge", "--chat-template", config,
                         "--title", "73017=Pomona; or, the Future of English", "--json")
    assert code == 0, err
    recs = _records(out)
    assert doc["n_records"] == len(recs) == 3 and doc["chunks"][0]["paper_chunks"] == 2
    assert all(r["book_id"] == 73017 and r["n_words"] >= 3000 for r in recs)
    r = recs[0]
    assert r["title"] == "Pomona; or, the Future of English"
    assert r["text"] == "<s>[system]" + r["messages"][0]["content"] + "[user]" + \
        r["messages"][1]["content"]
    meta = json.loads((tmp_path / "c.source.json").read_text())
    assert meta["chat_template"]["special_tokens"] == {"bos_token": "<s>"}
    bare = tmp_path / "t.jinja"
    bare.write_text("{{ bos_token }}{{ messages[0]['content'] }}")
    code, _, err = cli("export", "sort", "--finetune-corpus", "--books", sort_data, "--out",
                       tmp_path / "d.jsonl", "--chat-template", bare)
    assert code == 2 and "bos_token" in err and "tokenizer_config.json" in err


@pytest.mark.parametrize("extra, message", [
    (["--held-out", "12345"], "unknown book id"),
    (["--title", "73017"], "--title expects ID=TITLE"),
    (["--chunk-words", "0"], "--chunk-words must be between 1 and 100000"),
    (["--chat-template", "nope.jinja"], "no such file"),
])
def test_bad_input_is_one_clear_line(cli, tmp_path, sort_data, extra, message):
    code, _, err = cli("export", "sort", "--finetune-corpus", "--books", sort_data, "--out",
                       tmp_path / "x.jsonl", *extra)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "x.jsonl").exists()


def test_missing_or_altered_upstream_prompt(cli, tmp_path, sort_data):
    books = tmp_path / "books"
    shutil.copytree(sort_data / "pg", books / "pg")
    code, _, err = cli("export", "sort", "--finetune-corpus", "--books", books, "--out",
                       tmp_path / "x.jsonl")
    assert code == 2 and "prompt_1.yaml" in err and "data fetch sort" in err
    target = books / PROMPT_1
    target.parent.mkdir(parents=True)
    target.write_text((sort_data / PROMPT_1).read_text().replace("honest", "truthful"))
    code, _, err = cli("export", "sort", "--finetune-corpus", "--books", books, "--out",
                       tmp_path / "x.jsonl")
    assert code == 2 and "does not match the official file" in err
