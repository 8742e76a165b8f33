"""Reasoning models: `reasoning_content` and `<think>` blocks are kept apart from the answer in
the backend, the cache, usage, WorldSense, Already Said That and MR-GSM8K; replies cut off while
thinking are reported as such; `--reasoning-effort` / `--reasoning` reach the requests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mindprobe.core.requests import replies_of
from mindprobe.core.store import read_records
from mindprobe.models.base import Completion, Reasoning, Request, Usage, split_reasoning
from mindprobe.models.openai_compat import OPENAI_URL, OpenAICompatModel
from mindprobe.testing import TestServer

MODEL = "openai:test-model@{url}"


def _model(url: str = "http://127.0.0.1:9/v1", effort: str | None = None) -> OpenAICompatModel:
    return OpenAICompatModel("m", url, None, spec=f"openai:m@{url}", label="m",
                             reasoning=Reasoning.of(effort))


def _payload(content, finish="stop", reasoning=None, reasoning_tokens=None, key="reasoning_content"):
    message = {"role": "assistant", "content": content}
    if reasoning is not None:
        message[key] = reasoning
    usage = {"prompt_tokens": 5, "completion_tokens": 9}
    if reasoning_tokens is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
    return {"choices": [{"message": message, "finish_reason": finish}], "usage": usage}


# --------------------------------------------------------------------------- backend parsing
@pytest.mark.parametrize("text, expected", [
    ("TRUE", (None, "TRUE", False)),
    ("<think>a, b</think>TRUE", ("a, b", "TRUE", False)),
    ("\n<think>\nlong\nthought\n</think>\n\nFALSE", ("long\nthought", "FALSE", False)),
    ("thinking opened by the template</think>\n(1)", ("thinking opened by the template", "(1)",
                                                      False)),
    ("<think>still going", ("still going", "", True)),
    ("<think></think>TRUE", ("", "TRUE", False)),
    ("He said <think> is a tag", (None, "He said <think> is a tag", False)),
])
def test_split_reasoning(text, expected):
    assert split_reasoning(text) == expected


def test_parse_reasoning_content_and_tokens():
    m = _model()
    c = m._parse(_payload("FALSE", reasoning="step 1 ... TRUE? no", reasoning_tokens=7),
                 "/chat/completions", 0.1)
    assert (c.text, c.reasoning, c.reasoning_tokens) == ("FALSE", "step 1 ... TRUE? no", 7)
    assert not c.truncated_in_reasoning and m.can("reasoning")  # known to think from now on
    c = m._parse(_payload("FALSE", reasoning="newer vLLM field", key="reasoning"),
                 "/chat/completions", 0.1)
    assert c.reasoning == "newer vLLM field"


def test_parse_think_block_in_the_text():
    m = _model()
    c = m._parse(_payload("<think>\n\n</think>\n\nTRUE"), "/chat/completions", 0.1)
    assert (c.text, c.reasoning) == ("TRUE", "")
    assert not m.can("reasoning")  # an empty thinking block (thinking switched off)
    c = m._parse(_payload("<think>TRUE maybe</think>\nFALSE"), "/chat/completions", 0.1)
    assert (c.text, c.reasoning, c.truncated_in_reasoning) == ("FALSE", "TRUE maybe", False)
    c = m._parse({"choices": [{"text": "<think>x</think>2", "finish_reason": "stop"}]},
                 "/completions", 0.1)
    assert (c.text, c.reasoning) == ("2", "x")


@pytest.mark.parametrize("payload, truncated", [
    (_payload("<think>cut off here", finish="length"), True),
    (_payload(None, finish="length", reasoning="cut off inside the parser's field"), True),
    (_payload("<think>closed</think>TR", finish="length"), False),  # cut in the answer: invalid
    (_payload("<think>never closed", finish="stop"), False),
    (_payload("no thinking at all", finish="length"), False),
])
def test_truncated_in_reasoning(payload, truncated):
    c = _model()._parse(payload, "/chat/completions", 0.1)
    assert c.truncated_in_reasoning is truncated
    if truncated:
        assert c.text == ""


def test_cache_round_trip_and_old_entries():
    c = Completion("FALSE", completion_tokens=9, reasoning="why", reasoning_tokens=4,
                   truncated_in_reasoning=False, finish_reason="stop")
    back = Completion.from_cached(json.loads(json.dumps(c.to_cache())))
    assert (back.text, back.reasoning, back.reasoning_tokens) == ("FALSE", "why", 4)
    old = {"text": "<think>cut", "finish_reason": "length"}  # cached before the split existed
    back = Completion.from_cached(old)
    assert (back.text, back.reasoning, back.truncated_in_reasoning) == ("", "cut", True)


def test_usage_counts_reasoning_tokens():
    u = Usage(completion_tokens=10, reasoning_tokens=6)
    u.add(Usage.from_dict({"completion_tokens": 3, "reasoning_tokens": 2}))
    assert u.as_dict()["reasoning_tokens"] == 8 and Usage.from_dict({}).reasoning_tokens == 0


def test_reasoning_effort_in_the_body():
    m = _model()
    assert "reasoning_effort" not in m.build_body(Request(messages=[]))[1]
    assert m.build_body(Request(messages=[], reasoning_effort="high"))[1]["reasoning_effort"] \
        == "high"
    assert Request(messages=[]).reasoning_effort is None
    m = _model(effort="low")
    _, body = m.build_body(Request(messages=[], max_tokens=50))
    assert body["reasoning_effort"] == "low" and body["max_tokens"] == 50
    assert m.identity()["reasoning_effort"] == "low" and m.can("reasoning")
    openai = _model(OPENAI_URL, effort="low")
    _, body = openai.build_body(Request(messages=[], max_tokens=50))
    assert body["max_completion_tokens"] == 50 and "max_tokens" not in body
    assert "temperature" not in body
    with pytest.raises(Exception, match="expected one of"):
        _model(effort="extreme")


# --------------------------------------------------------------------------- WorldSense
def ws_first(text: str) -> str:
    if "'TRUE', 'FALSE'" in text:
        return "TRUE"
    return "POSSIBLE" if "POSSIBLE" in text else "(1)"


def _ws(cli, tmp_path, srv, *args):
    code, doc, err = cli("run", "worldsense:fresh", "--model", MODEL.format(url=srv.base_url),
                         "--runs-dir", tmp_path / "runs", "--json", "--limit", 10, "--no-cache",
                         *args)
    assert code == 0, err
    return doc, read_records(Path(doc["run"]) / "records.jsonl")


@pytest.mark.parametrize("parser", [True, False])
def test_worldsense_thinking_reply_is_a_valid_answer(cli, tmp_path, recorder, parser):
    # The thinking names the other answer first: only the answer after it may be read.
    rec = recorder(lambda b: "<think>FALSE? IMPOSSIBLE? (3)? Let me check.</think>\n"
                   + ws_first(b["messages"][-1]["content"]))
    with TestServer(responder=rec, reasoning_parser=parser) as srv:
        doc, records = _ws(cli, tmp_path, srv, "--max-tokens", 64)
    assert doc["n_invalid"] == 0 and doc["n_truncated_in_reasoning"] == 0
    assert all(r["resp"] in ("TRUE", "POSSIBLE", "1") for r in records)
    assert all(r["reasoning"] == ["FALSE? IMPOSSIBLE? (3)? Let me check."] for r in records)
    assert all("<think>" not in replies_of(r)[0] for r in records)
    assert (doc["usage"]["reasoning_tokens"] > 0) is parser  # reported by parsers only


def test_worldsense_cut_off_while_thinking_is_its_own_count(cli, tmp_path, recorder):
    rec = recorder(lambda b: "<think>" + "hmm " * 40 + "</think>TRUE")
    with TestServer(responder=rec, reasoning_parser=True) as srv:
        doc, records = _ws(cli, tmp_path, srv, "--max-tokens", 16)
    assert all(r["truncated_in_reasoning"] and r["resp"] == "" for r in records)
    assert len(rec.bodies) == len(records)  # --max-tokens given: no more room, no re-ask
    assert doc["n_truncated_in_reasoning"] == len(records) and doc["n_invalid"] == 0
    assert any("cut off while the model was still thinking" in w for w in doc["warnings"])
    assert any("cut off thinking" in row for row in doc["tables"][next(iter(doc["tables"]))])


def test_worldsense_makes_room_for_thinking(cli, tmp_path, recorder):
    rec = recorder(lambda b: "<think>" + "hmm " * 40 + "</think>"
                   + ws_first(b["messages"][-1]["content"]))
    with TestServer(responder=rec) as srv:
        doc, records = _ws(cli, tmp_path, srv, "--concurrency", 1)
    assert doc["n_truncated_in_reasoning"] == 0 and all(r["resp"] for r in records)
    # The first reply was cut at 16 tokens and asked again with room; the model is then known
    # to think and every later request gets the room at once.
    assert [b["max_tokens"] for b in rec.bodies] == [16] + [16 + 4096] * len(records)


def test_reasoning_flags_reach_the_requests(cli, tmp_path, recorder):
    rec = recorder(lambda b: ws_first(b["messages"][-1]["content"]))
    with TestServer(responder=rec) as srv:
        doc, _ = _ws(cli, tmp_path, srv, "--reasoning-effort", "medium")
    assert {b["reasoning_effort"] for b in rec.bodies} == {"medium"}
    assert {b["max_tokens"] for b in rec.bodies} == {16 + 4096}  # effort implies thinking
    manifest = json.loads((Path(doc["run"]) / "manifest.json").read_text())
    assert manifest["model_identity"]["model"]["reasoning_effort"] == "medium"


def test_reasoning_flag_leaves_room_from_the_start(cli, tmp_path, recorder, monkeypatch):
    rec = recorder(lambda b: ws_first(b["messages"][-1]["content"]))
    with TestServer(responder=rec) as srv:
        _ws(cli, tmp_path, srv, "--reasoning", "--prompting", "cot")
    assert {b["max_tokens"] for b in rec.bodies} == {1024 + 4096}
    assert all("reasoning_effort" not in b for b in rec.bodies)


# --------------------------------------------------------------------------- Already Said That
def test_already_said_that_keeps_thinking_out_of_the_history(cli, tmp_path, recorder,
                                                             shared_data):
    data = shared_data("already_said_that")
    rec = recorder(lambda b: "<think>SECRET-THOUGHT yes or no?</think>[answer: no]")
    with TestServer(responder=rec, reasoning_parser=True) as srv:
        code, doc, err = cli("run", "already_said_that:distractorless", "--model",
                             MODEL.format(url=srv.base_url), "--data-dir", data, "--runs-dir",
                             tmp_path, "--n-samples", 2, "--max-turns", 6, "--json",
                             "--no-cache")
    assert code == 0, err
    for body in rec.bodies:
        assert "SECRET" not in json.dumps(body)
    assistant = [m["content"] for b in rec.bodies for m in b["messages"]
                 if m["role"] == "assistant"]
    assert assistant and set(assistant) == {"[answer: no]"}
    records = read_records(Path(doc["run"]) / "records.jsonl")
    turns = [t for r in records for t in r["transcript"]]
    assert all(t["reasoning"] == "SECRET-THOUGHT yes or no?" for t in turns)
    assert all(t["reply"] == "[answer: no]" for t in turns)
    assert doc["tokens"]["reasoning_tokens"] > 0


# --------------------------------------------------------------------------- MR-GSM8K
DECOY = ("Final Judgement: correct\nFirst Error Step: N/A\nError Analysis: decoy in the "
         "thinking")
REAL = ("Step-by-step Evaluation: checked.\nFinal Judgement: wrong\nFirst Error Step: 1\n"
        "Error Analysis: the real answer")


@pytest.mark.parametrize("parser", [True, False])
def test_mr_gsm8k_parses_the_answer_not_the_thinking(cli, tmp_path, shared_data, parser):
    data = shared_data("mr_gsm8k")
    with TestServer(reply=f"<think>{DECOY}</think>\n{REAL}", reasoning_parser=parser) as srv:
        code, doc, err = cli("run", "mr_gsm8k:sample", "--model", MODEL.format(url=srv.base_url),
                             "--data-dir", data, "--runs-dir", tmp_path, "--limit", 3, "--json",
                             "--no-cache")
    assert code == 0, err
    records = read_records(Path(doc["run"]) / "records.jsonl")
    assert len(records) == 3
    for r in records:
        assert r["judgement"] == "wrong" and r["error_text"] == "the real answer"
        assert r["reply"] == REAL and DECOY in r["reasoning"]


def test_reasoning_flags_do_not_leak_between_commands(cli, tmp_path):
    """`--reasoning-effort` applies to its own command only (in-process callers included)."""
    import os

    from mindprobe.testing import TestServer

    with TestServer(reply="TRUE") as srv:
        model = f"openai:test-model@{srv.base_url}"
        assert cli("run", "worldsense:fresh", "--model", model, "--limit", 4, "--runs-dir",
                   tmp_path / "a", "--reasoning-effort", "low")[0] == 0
        assert not os.environ.get("MINDPROBE_REASONING_EFFORT")
