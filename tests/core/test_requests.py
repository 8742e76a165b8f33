"""Every record stores what was sent (`request`: messages or prompt, plus params) and the raw
reply (`reply`); a chat's turns carry theirs; long texts repeated across items are stored once
per run (`texts.jsonl`). Checked against what the local test server really received."""

from __future__ import annotations

from pathlib import Path

from mindprobe.core.requests import (
    CallLog,
    TextStore,
    calls_of,
    expand_calls,
    read_texts,
    replies_of,
)
from mindprobe.core.store import load_run, read_records
from mindprobe.testing.server import TestServer

SYSTEM = "You are a careful reader. " * 30  # a long shared text


def _call(messages, **params):
    return {"messages": messages, "params": {"max_tokens": 8, "temperature": 0.0, **params}}


def test_a_chat_stores_each_turn_once_and_expands_back():
    log = CallLog()
    sys_, u1 = {"role": "system", "content": SYSTEM}, {"role": "user", "content": "first?"}
    first = [sys_, u1]
    second = [*first, {"role": "assistant", "content": "yes"}, {"role": "user", "content": "2?"}]
    log.add("model", _call(first), "yes")
    one, reply = log.take("model")
    assert one == _call(first) and reply == "yes"
    log.add("model", _call(second), "no")
    log.add("judge", _call([u1]), "OK")
    two, reply = log.take("model")
    assert two == {"history": 3, "messages": [second[-1]], "params": _call([])["params"]}
    assert reply == "no" and log.roles() == ["judge"]
    full = expand_calls([one, two], replies=["yes", "no"])
    assert [c["messages"] for c in full] == [first, second]
    # a call that drops part of the history (a CoT's private reasoning) keeps only the prefix
    third = [*first, {"role": "assistant", "content": "yes"}, {"role": "system", "content": "x"}]
    log.add("model", _call(third), "r")
    three, _ = log.take("model")
    assert three["history"] == 3 and three["messages"] == third[3:]


def test_several_calls_each_carry_their_reply():
    log = CallLog()
    msgs = [{"role": "user", "content": "q"}]
    log.add("model", _call(msgs), "bad")
    log.add("model", _call([*msgs, {"role": "assistant", "content": "bad"},
                            {"role": "user", "content": "again"}]), "good")
    calls, last = log.take()
    assert [c["reply"] for c in calls] == ["bad", "good"] and last == "good"
    assert replies_of({"request": calls, "reply": last}) == ["bad", "good"]
    assert calls[1]["history"] == 2 and len(calls[1]["messages"]) == 1


def test_shared_texts_are_stored_on_second_sight(tmp_path: Path):
    store = TextStore(tmp_path)
    req = _call([{"role": "system", "content": SYSTEM}, {"role": "user", "content": "q"}])
    assert store.share(req) == req  # first sender keeps it inline
    shared = store.share(req)
    ref = shared["messages"][0]["content"]
    assert set(ref) == {"sha256"} and shared["messages"][1]["content"] == "q"
    texts = read_texts(tmp_path / "texts.jsonl")
    assert texts == {ref["sha256"]: SYSTEM}
    assert TextStore(tmp_path).share(req)["messages"][0]["content"] == ref  # after a resume
    assert expand_calls([shared], texts)[0]["messages"] == req["messages"]


def _run(cli, tmp_path, variant: str, reply: str, *args) -> list[dict]:
    """Run `variant` against the test server answering `reply`; the bodies it received."""
    bodies: list[dict] = []

    def capture(body: dict) -> str:
        bodies.append(body)
        return reply

    with TestServer(responder=capture) as srv:
        code, _, err = cli("run", variant, "--model", f"openai:test-model@{srv.base_url}",
                           "--runs-dir", tmp_path, "--concurrency", 1, *args)
    assert code == 0, err
    return bodies


def test_worldsense_records_the_reasks_as_sent(cli, tmp_path):
    # never a valid answer: every item re-asked
    bodies = _run(cli, tmp_path, "worldsense:fresh", "hello", "--limit", 3, "--reasks", 1)
    recs = read_records(next(tmp_path.rglob("records.jsonl")))
    assert len(recs) >= 3 and all("raw" not in r for r in recs)  # whole tuples
    sent = []
    for rec in recs:
        calls = calls_of(rec["request"])
        assert len(calls) == 2 and rec["reply"] == "hello" == calls[0]["reply"]
        assert "reply" not in calls[-1] and replies_of(rec) == ["hello", "hello"]  # once
        assert calls[1]["history"] == 2 and [m["role"] for m in calls[1]["messages"]] == ["user"]
        full = expand_calls(calls)
        sent += [c["messages"] for c in full]
        assert all(c["params"]["max_tokens"] == b["max_tokens"] for c, b in zip(
            full, bodies[len(sent) - 2:len(sent)], strict=True))
    assert sent == [b["messages"] for b in bodies]


def test_already_said_that_turns_carry_their_requests(cli, tmp_path, shared_data):
    data = shared_data("already_said_that")
    bodies = _run(cli, tmp_path, "already_said_that:distractorless", "no", "--limit", 2,
                  "--data-dir", data)
    run = load_run(next(tmp_path.rglob("records.jsonl")).parent)
    sent = []
    for rec in run.records:
        turns = rec["transcript"]
        assert "request" not in rec and all("request" in t for t in turns)
        calls = [c for t in turns for c in calls_of(t["request"])]
        replies = [r for t in turns for r in replies_of(t)]
        assert all(c.get("history") for c in calls[1:])  # later turns: only the new messages
        sent += [c["messages"] for c in expand_calls(calls, run.texts, replies)]
    assert sent == [b["messages"] for b in bodies]
    # the task description, sent to every episode, is stored once for the run
    first = calls_of(run.records[1]["transcript"][0]["request"])[0]["messages"][0]["content"]
    assert set(first) == {"sha256"} and run.texts[first["sha256"]] == bodies[0]["messages"][0][
        "content"]


def test_mr_gsm8k_records_request_and_reply(cli, tmp_path, shared_data):
    data = shared_data("mr_gsm8k")
    bodies = _run(cli, tmp_path, "mr_gsm8k:sample", "Solution: correct", "--limit", 2,
                  "--data-dir", data)
    recs = read_records(next(tmp_path.rglob("records.jsonl")))
    assert [r["request"]["messages"] for r in recs] == [b["messages"] for b in bodies]
    assert all(r["reply"] == "Solution: correct" and "response" not in r for r in recs)
    assert [r["request"]["params"]["max_tokens"] for r in recs] == [b["max_tokens"]
                                                                    for b in bodies]
