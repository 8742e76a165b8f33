"""Every legal form of a reply, and usage a hostile server reports: against the real client
and the test server on 127.0.0.1 (issue #42, #41 items 9 and 13)."""

from __future__ import annotations

import math

import pytest

from mindprobe.core.store import read_records
from mindprobe.models.replies import reply_text, reply_usage, usage_count
from mindprobe.testing import TestServer
from mindprobe.testing.responders import worldsense_answer


def _run(cli, tmp_path, n: int = 6, **server):
    with TestServer(responder=worldsense_answer, **server) as srv:
        code, doc, err = cli("run", "worldsense:fresh", "--model",
                             f"openai:test-model@{srv.base_url}", "--limit", n,
                             "--runs-dir", tmp_path, "--no-cache", "--json")
    records = read_records(tmp_path / "worldsense" / "fresh" / "basic___test-model"
                           / "records.jsonl")
    return code, doc, err, records


def test_a_list_of_parts_is_scored_like_a_string(cli, tmp_path):
    code, doc, err, records = _run(cli, tmp_path / "parts", content_form="parts")
    assert code == 0, err
    _, plain, _, plain_records = _run(cli, tmp_path / "string")
    assert doc["invalid"]["count"] == 0 and len(records) == 6
    assert [r["resp"] for r in records] == [r["resp"] for r in plain_records]
    assert all(r["resp"] in ("1", "2", "3", "TRUE", "FALSE", "POSSIBLE", "IMPOSSIBLE")
               for r in records)
    assert doc["headline"] == plain["headline"]
    assert sum("were not text" in w for w in doc["warnings"]) == 1  # one line, not one per item


@pytest.mark.parametrize("form", ["integer", "object", "null"])
def test_a_reply_without_text_is_an_invalid_answer_never_an_internal_error(cli, tmp_path, form):
    code, doc, err, records = _run(cli, tmp_path, content_form=form)
    assert code == 0, err
    assert len(records) == 6 and not any("error" in r for r in records)
    assert doc["invalid"]["count"] == 6
    if form == "null":  # legal: a reasoning model's reply with no answer after its thinking
        assert not any("invalid_reply" in r for r in records)
    else:
        kind = {"integer": "an integer", "object": "an object"}[form]
        assert {r["invalid_reply"] for r in records} == {
            f"content is {kind} (expected a string, null or a list of parts)"}
        assert sum("held no text" in w for w in doc["warnings"]) == 1


@pytest.mark.parametrize("usage", [{"prompt_tokens": 1e30}, {"prompt_tokens": 10**30},
                                   {"prompt_tokens": -600}, {"completion_tokens": "many"}])
def test_impossible_usage_loses_nothing_and_is_warned_about_once(cli, tmp_path, usage):
    code, doc, err, records = _run(cli, tmp_path, usage_override=usage)
    assert code == 0, err
    assert len(records) == 6 and not any("error" in r for r in records)
    assert doc["invalid"]["count"] == 0
    assert sum("impossible token usage" in w for w in doc["warnings"]) == 1
    u = doc["usage"]
    assert 0 <= u["prompt_tokens"] < 10**9 and 0 <= u["completion_tokens"] < 10**9
    if "prompt_tokens" in usage:
        assert u["prompt_tokens"] == 0 and u["completion_tokens"] > 0


def test_the_run_summary_shows_no_negative_usage(cli, tmp_path):
    with TestServer(responder=worldsense_answer, usage_override={"prompt_tokens": -600}) as srv:
        code, out, err = cli("run", "worldsense:fresh", "--model",
                             f"openai:test-model@{srv.base_url}", "--limit", 4,
                             "--runs-dir", tmp_path, "--no-cache")
    assert code == 0, err
    text = out + err
    assert "prompt -600" not in text and "prompt 0 " in text
    assert text.count("impossible token usage") == 1


def test_reply_forms_one_by_one():
    assert reply_text("x").text == "x" and reply_text(None).text == ""
    parts = [{"type": "text", "text": "a"}, {"type": "image_url"}, "b",
             {"type": "output_text", "text": "c"}, {"type": "text", "text": 5}]
    got = reply_text(parts)
    assert (got.text, got.ignored, got.invalid) == ("ac", 3, None)
    assert reply_text(7).invalid.startswith("content is an integer")
    assert reply_text(True).invalid.startswith("content is a boolean")
    assert reply_text(1.5).invalid.startswith("content is a number")


@pytest.mark.parametrize("value,expected", [
    (None, 0), (0, 0), (12, 12), (12.0, 12), (10**9, 10**9), (10**9 + 1, None), (-1, None),
    (1e30, None), (math.nan, None), (math.inf, None), (2.5, None), (True, None), ("3", None)])
def test_usage_counts_are_whole_and_bounded(value, expected):
    assert usage_count(value) == expected


def test_cached_tokens_never_exceed_the_prompt():
    u = reply_usage({"usage": {"prompt_tokens": 5, "completion_tokens": 1,
                               "prompt_tokens_details": {"cached_tokens": 9}}})
    assert (u.prompt_tokens, u.cached_prompt_tokens, u.bad) == (5, 5, [])
    assert reply_usage({"usage": "lots"}).bad == ["usage='lots'"]


@pytest.mark.slow
def test_several_endpoints_warn_once_for_all(cli, tmp_path):
    with TestServer(responder=worldsense_answer, usage_override={"prompt_tokens": -600},
                    content_form="parts") as a, \
            TestServer(responder=worldsense_answer, usage_override={"prompt_tokens": -600},
                       content_form="parts") as b:
        code, doc, err = cli("run", "worldsense:fresh", "--model",
                             f"openai:test-model@{a.base_url},{b.base_url}", "--limit", 8,
                             "--concurrency", 4, "--runs-dir", tmp_path, "--no-cache", "--json")
        served = [a.stats()["served_ok"], b.stats()["served_ok"]]
    assert code == 0, err
    assert all(served) and doc["invalid"]["count"] == 0
    assert sum("impossible token usage" in w for w in doc["warnings"]) == 1
    assert sum("were not text" in w for w in doc["warnings"]) == 1
    assert doc["usage"]["prompt_tokens"] == 0


@pytest.mark.parametrize("payload", [{"choices": ["text"]}, {"choices": [{"message": "hi"}]},
                                     {"choices": [{"message": ["hi"]}]}])
def test_a_reply_of_no_shape_is_a_malformed_body_not_an_internal_error(payload):
    from mindprobe.models import parse_model_spec

    model = parse_model_spec("openai:m@127.0.0.1:9")
    with pytest.raises(TypeError, match="not an object"):
        model._parse(payload, "/chat/completions", 0.0)
