"""The paper's prompts (spec §2): exact texts, the <search> protocol, fills and trimming."""

from __future__ import annotations

import pytest

from mindprobe.benchmarks.fanoutqa import prompts as P
from mindprobe.benchmarks.fanoutqa.chunking import Chunk

Q = "Who were the first 5 picks in the 1998 MLB Draft?"
TAIL = (
    "If the answer is a list, output one on each line. Current date: 11-20-2023.\n\n"
    "[Question]: " + Q
)


def test_closed_book():
    assert P.closed_book_messages(Q) == [
        {
            "role": "user",
            "content": ("Answer the following question, and output only your answer. " + TAIL),
        }
    ]


def test_open_book_prompts():
    text = P.open_book_messages(Q)[0]["content"]
    assert text == (
        "You have the ability to search Wikipedia for information. To do so, output a message in "
        "the format <search>{YOUR_SEARCH_QUERY}</search> (e.g. `<search>List of states and "
        "territories of the United States</search>`).\nAnswer the following question, and output "
        "only your answer or a search, but not both. " + TAIL
    )
    assert P.open_book_messages(Q, "tools")[0]["content"] == (
        "Answer the following question, and output only a function call or your answer. " + TAIL
    )
    assert P.open_book_messages(Q, "tools-gpt35")[0]["content"].endswith(
        "You may search before outputting your answer. " + TAIL
    )
    assert P.SEARCH_TOOL["function"]["name"] == "search"


@pytest.mark.parametrize(
    "reply, content, query",
    [
        ("<search>Pat Burrell</search>", "<search>Pat Burrell</search>", "Pat Burrell"),
        (
            "<search>A</search> and <search>B</search> then text",
            "<search>A</search>",
            "A",
        ),  # non-greedy; truncated right after the first </search>
        ("Pat Burrell\nMark Mulder", "Pat Burrell\nMark Mulder", None),
        (" <search>A</search>", " <search>A</search>", None),  # must start the reply
        ("I will <search>A</search>", "I will <search>A</search>", None),
        ("<search></search>", "<search></search>", None),  # empty query is not a search
        ("<search>a\nb</search>", "<search>a\nb</search>", None),  # query on one line
    ],
)
def test_parse_reply(reply, content, query):
    parsed = P.parse_reply(reply)
    assert (parsed.content, parsed.query, parsed.is_search) == (content, query, query is not None)


def test_tool_result_texts():
    assert P.search_not_found(["A", "B"]) == (
        "No page with that title exists. Try one of the similar searches:\n"
        "<search>A</search>\n<search>B</search>"
    )
    assert P.search_disambiguation(["X (film)"]) == (
        "That may refer to multiple pages. Select one of these pages:\n<search>X (film)</search>"
    )
    assert P.tool_result_message("r") == {"role": "user", "content": "r"}
    assert P.tool_result_message("r", "tools", "c1")["role"] == "tool"


def test_render_page_and_documents():
    assert P.render_page("T", ["a", "b"]) == (
        "<document>\n<title>T</title>\n<fragment>\na\n</fragment>\n<fragment>\nb\n</fragment>\n"
        "</document>"
    )
    assert P.render_documents([Chunk("T", "c")]) == (
        "<document>\n<title>T</title>\n<content>c</content>\n</document>\n"
    )
    assert P.evidence_provided_prompt(Q, [Chunk("T", "c")]) == (
        "*** BEGIN DATA ***\n\n<document>\n<title>T</title>\n<content>c</content>\n</document>\n"
        "\n*** END DATA ***\n\nAnswer the following question based on the documents above, and "
        "output only your answer. " + TAIL
    )
    assert P.evidence_budget(4096) == 3576


def _words(text: str) -> int:
    return len(text.split())


def test_evidence_provided_fill(exact_normalizer):
    pages = [
        ("1998 MLB draft", "The first pick was Pat Burrell.\n\nWeather was mild.\n\n" * 3),
        ("Weather", "It rained a lot in spring."),
    ]
    empty = _words(P.evidence_provided_prompt(Q, []))
    big = P.evidence_provided_messages(Q, pages, 10_000, _words, exact_normalizer, chunk_size=40)
    assert big.n_chunks_kept == big.n_chunks_total == 7
    small = P.evidence_provided_messages(
        Q, pages, empty + 520 + 12, _words, exact_normalizer, chunk_size=40
    )
    assert 0 < small.n_chunks_kept < small.n_chunks_total
    assert small.prompt_tokens <= empty + 12
    assert "Pat Burrell" in small.messages[0]["content"]  # best-ranked chunk goes first


def test_search_page_result(exact_normalizer):
    md = "Pat Burrell was the first pick.\n\nUnrelated text about rivers.\n\n" * 4
    text = P.search_page_result("1998 draft", md, Q, 60, _words, exact_normalizer, chunk_size=35)
    assert text.startswith("<document>\n<title>1998 draft</title>\n<fragment>\n")
    assert _words(text) <= 30 and "Pat Burrell" in text


def test_trim_history_and_final_answer():
    msgs = [
        {"role": "user", "content": "q " * 5},
        {"role": "assistant", "content": "s " * 3},
        {"role": "tool", "content": "r " * 10},
        {"role": "assistant", "content": "a " * 2},
    ]

    def count(m):
        return len(m["content"].split())

    assert P.trim_history(msgs, 100, count) == msgs
    assert P.trim_history(msgs, 15, count) == msgs[1:]
    assert P.trim_history(msgs, 12, count) == msgs[3:]  # no orphan tool result at the front
    assert P.trim_history(msgs, 1, count) == msgs[3:]  # the newest message always stays
    assert P.trim_history(msgs, 8, count, keep_first=1) == [msgs[0], msgs[3]]
    assert P.final_answer(msgs + [{"role": "assistant", "content": ""}]) == "a a "
    assert P.final_answer([]) == ""
