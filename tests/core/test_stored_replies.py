"""Issue 41.15: a reply is stored once per record and bounded (`core.stored_replies`): a
server answering a short request with megabytes costs at most the cap per reply, the full
length is recorded, and the answer is still parsed from the whole reply."""

from __future__ import annotations

import json

import pytest

from mindprobe.core.cache import ResponseCache
from mindprobe.core.stored_replies import MAX_STORED_CHARS, fits_cache, store_once
from mindprobe.testing import TestServer
from mindprobe.testing.responders import worldsense_answer


def test_a_long_text_is_cut_with_its_length_and_a_flag_and_what_was_sent_is_kept():
    long, prompt = "x" * 50, "p" * 50
    rec = {"id": "1", "reply": long, "resp": "TRUE",
           "request": [{"messages": [{"role": "user", "content": prompt}], "reply": long},
                       {"prompt": prompt, "reply": "last"}],
           "judge_request": {"messages": [{"role": "user", "content": prompt}]},
           "judge_reply": "short", "turns": [{"reply": long, "cot_reasoning": long}]}
    store_once(rec, limit=10)
    assert rec["reply"] == "x" * 10 and rec["reply_chars"] == 50 and rec["reply_truncated"]
    first, last = rec["request"]
    assert first["reply"] == "x" * 10 and first["reply_chars"] == 50
    assert first["messages"][0]["content"] == prompt and last["prompt"] == prompt  # as sent
    assert last["reply"] == "last"  # not the record's reply: kept
    assert rec["judge_reply"] == "short" and "judge_reply_truncated" not in rec
    assert rec["turns"][0]["cot_reasoning_chars"] == 50 and rec["resp"] == "TRUE"
    assert store_once(json.loads(json.dumps(rec)), limit=10) == rec  # idempotent


def test_the_last_calls_reply_is_stored_once_in_its_holder():
    rec = {"id": "1", "reply": "B", "request": [{"prompt": "a", "reply": "A"},
                                                {"prompt": "b", "reply": "B"}],
           "turns": [{"reply": "D", "request": [{"prompt": "c", "reply": "C"},
                                                {"prompt": "d", "reply": "D"}]}]}
    store_once(rec)
    assert rec["request"] == [{"prompt": "a", "reply": "A"}, {"prompt": "b"}]
    assert rec["turns"][0]["request"][-1] == {"prompt": "d"}


def test_the_cache_does_not_store_a_reply_over_the_cap(tmp_path):
    said: list[str] = []
    cache = ResponseCache(tmp_path / "c.sqlite", warn=said.append)
    cache.put("big", {"text": "x" * (MAX_STORED_CHARS + 1)})
    cache.put("ok", {"text": "x" * MAX_STORED_CHARS})
    assert cache.get("big") is None and cache.get("ok") is not None
    assert cache.oversized == 1 and len(said) == 1 and "not cached" in said[0]
    assert fits_cache({"text": "ok", "logprobs": [{"t": "y" * 5}]}, limit=5)
    cache.close()


@pytest.mark.slow
def test_a_megabytes_reply_is_stored_bounded_and_parsed_whole(cli, tmp_path, monkeypatch):
    """3 MiB of `*` before the answer: the answer is parsed from the whole reply (the cut
    one, all `*`, would be invalid and re-asked), the record keeps 1 MiB of it with its full
    length, and the response cache keeps none of it."""
    pad = 3 * MAX_STORED_CHARS
    monkeypatch.setenv("MINDPROBE_CACHE_DIR", str(tmp_path / "cache"))
    with TestServer(responder=lambda body: "*" * pad + worldsense_answer(body)) as srv:
        code, _, err = cli("run", "worldsense:fresh", "--model",
                           f"openai:test-model@{srv.base_url}", "--limit", 3,
                           "--runs-dir", tmp_path / "runs")
    assert code == 0, err
    path = next((tmp_path / "runs").rglob("records.jsonl"))
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(records) == 3 and all(r["resp"] for r in records)  # valid: parsed whole
    for r in records:
        assert isinstance(r["request"], dict)  # one call: no re-ask
        assert len(r["reply"]) == MAX_STORED_CHARS and r["reply_truncated"] is True
        assert r["reply_chars"] == pad + len("(3)")
    assert path.stat().st_size < 3 * (MAX_STORED_CHARS + 20_000)  # each reply once, cut
    assert "not cached" in err
    assert sum(p.stat().st_size for p in (tmp_path / "cache").rglob("*")) < MAX_STORED_CHARS


def test_a_transcript_gives_a_cut_replys_full_length():
    """The report says how long a reply was, not how much of it the record kept."""
    from mindprobe.report.transcripts import conversation

    rec = store_once({"id": "1", "request": {"prompt": "q"}, "reply": "y" * 30}, limit=20)
    page = conversation(rec)
    assert "more of its 30 characters" in page and "keeps its first 20" in page
    whole = conversation({"id": "1", "request": {"prompt": "q"}, "reply": "y" * 20})
    assert "more of its" not in whole


def test_the_size_check_is_exact_at_the_cap():
    """A record whose JSON fits the cap holds no text over it (the fast path: no walk over its
    fields); one byte more and a text at the cap still passes, one over it is cut."""
    from mindprobe.core.stored_replies import within

    assert within({"a": "x" * 10}, 20) and not within({"a": "x" * 20}, 20)
    rec = {"id": "1", "reply": "x" * 20, "usage": {"n": 1}}
    assert store_once(dict(rec), limit=20) == rec  # JSON over 20 bytes, text at the cap
    cut = store_once({"id": "1", "reply": "x" * 21}, limit=20)
    assert cut["reply"] == "x" * 20 and cut["reply_chars"] == 21
    assert fits_cache({"text": "x" * 20}, limit=20) and not fits_cache({"t": "x" * 21}, 20)
    assert fits_cache({"text": [object()]}, limit=5)  # not JSON: walked, no text over


def test_a_reply_is_dropped_once_even_in_a_small_record_and_not_inside_what_was_sent():
    rec = {"id": "1", "reply": None, "request": [{"prompt": "a", "reply": None}],
           "messages": [{"request": [{"reply": "B"}], "reply": "B"}]}
    store_once(rec)
    assert rec["request"] == [{"prompt": "a"}]  # equal to the holder's (null) reply
    assert rec["messages"][0]["request"] == [{"reply": "B"}]  # what was sent: untouched


def test_a_record_is_written_as_store_once_bounds_it():
    """The records file's line is `store_once`'s record, whether the record is within the
    cap (encoded once) or over it (cut, then encoded)."""
    from mindprobe.core.records import encode_record

    small = {"id": "1", "request": [{"prompt": "q", "reply": "a"}], "reply": "a"}
    big = {"id": "2", "reply": "x" * (MAX_STORED_CHARS + 5), "request": {"prompt": "q"}}
    for rec in (small, big):
        expected = store_once(json.loads(json.dumps(rec)))
        assert json.loads(encode_record(rec)) == expected == rec  # bounded in place too
    assert big["reply_truncated"] is True and "reply" not in small["request"][0]
