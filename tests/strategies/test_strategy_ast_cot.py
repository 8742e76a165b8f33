"""Already Said That `--solver cot` (upstream's two-call CoTSolver): the reasoning never enters
later prompts (only the second call's reply does, upstream's persistent_memory=False), prompts
grow linearly, tokens are reported per solver and per call kind, and --estimate prices the CoT
solver's extra calls. Byte-for-byte equality with upstream's requests is in
tests/already_said_that/test_ast_upstream_requests.py."""

from __future__ import annotations

import json
from pathlib import Path

from mindprobe.benchmarks.already_said_that import (
    estimate_tokens,
    load_distractors,
    load_samples,
    select_samples,
)
from mindprobe.benchmarks.already_said_that.episode import Episode, Reply
from mindprobe.core.store import read_records
from mindprobe.testing import TestServer

MODEL = "openai:test-model@{url}"


def cot_reply(body: dict) -> str:
    """The reasoning call (last message: the CoT system message) gets reasoning with a marker
    naming the turn; the answer call gets the tag (always `no`, so a chat ends at its first
    repeated word)."""
    msgs = body["messages"]
    if msgs[-2]["role"] == "user":  # call 1: ... user, system(reason)
        n = sum(1 for m in msgs if m["role"] == "user")
        return (f"SECRET-REASONING-{n}: I list the words shown so far and compare.\n"
                "The word has not been shown.")
    return "[answer: no]"


def _run(cli, tmp_path, data, srv, solver):
    code, doc, err = cli("run", "already_said_that:distractorless", "--model",
                         MODEL.format(url=srv.base_url), "--data-dir", data, "--runs-dir",
                         tmp_path, "--n-samples", 3, "--max-turns", 12, "--solver", solver,
                         "--json", "--no-cache", "--concurrency", 1)
    assert code == 0, err
    return doc


def test_cot_history_holds_only_the_answer(cli, tmp_path, shared_data, recorder):
    data = shared_data("already_said_that")
    rec = recorder(cot_reply)
    with TestServer(responder=rec) as srv:
        doc = _run(cli, tmp_path, data, srv, "cot")
    run = Path(doc["run"])
    assert run.name.startswith("cot___")
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["prompting"] == "cot"
    messages = manifest["config"]["cot_messages"]
    assert set(messages) == {"reason", "answer"}
    assert len(rec.bodies) > 6 and len(rec.bodies) % 2 == 0
    for reason, answer in zip(rec.bodies[::2], rec.bodies[1::2], strict=True):
        assert reason["messages"][-1] == {"role": "system", "content": messages["reason"]}
        assert answer["messages"][-1] == {"role": "system", "content": messages["answer"]}
        assert answer["messages"][:len(reason["messages"])] == reason["messages"]
        history = reason["messages"][:-2]  # system prompt and earlier turns
        assert history[0]["role"] == "system"
        assert "SECRET-REASONING" not in json.dumps(history)  # never re-sent in later turns
        assert all(m["content"] == "[answer: no]" for m in history if m["role"] == "assistant")
        assert reason["max_tokens"] == answer["max_tokens"] == 512
    # linear growth: each turn adds exactly one user and one assistant message
    sizes = [len(b["messages"]) for b in rec.bodies[::2]]
    for prev, cur in zip(sizes, sizes[1:], strict=False):
        assert cur == prev + 2 or cur == 3  # next turn, or a new chat
    records = read_records(run / "records.jsonl")
    turns = [t for r in records for t in r["transcript"]]
    assert all(t["cot_reasoning"].startswith("SECRET-REASONING") for t in turns)  # recorded
    assert all(t["reply"] == "[answer: no]" for t in turns)
    assert doc["tokens"]["solver"] == "cot" and doc["tokens"]["turns"] == len(turns)
    assert doc["tokens_by_call"]["reason"]["requests"] == len(turns)
    assert doc["tokens_by_call"]["answer"]["requests"] == len(turns)


def test_token_use_per_solver(cli, tmp_path, shared_data):
    data = shared_data("already_said_that")
    with TestServer(responder=cot_reply) as srv:
        cot = _run(cli, tmp_path / "a", data, srv, "cot")
    with TestServer(reply="[answer: no]") as srv:
        direct = _run(cli, tmp_path / "b", data, srv, "direct")
    assert Path(direct["run"]).name.startswith("direct___")
    # same chats (the answers are the same), so the same turns; CoT writes far more
    assert cot["tokens"]["turns"] == direct["tokens"]["turns"]
    assert cot["tokens"]["completion_tokens_per_turn"] > \
        5 * direct["tokens"]["completion_tokens_per_turn"]
    names = {row[""] for row in cot["tables"]["tokens"]}
    assert {"completion tokens per turn", "prompt tokens per turn", "reasoning tokens"} <= names


def test_episode_keeps_the_answer_not_the_reasoning(shared_data):
    root = shared_data("already_said_that")
    words = select_samples(load_samples(root), 1, 1)[0]
    pool, _ = load_distractors(root, "distractorless")
    ep = Episode(variant="distractorless", idx=0, seed=1, words=words, pool=pool, system="S",
                 max_turns=3)
    ep.next_user_message()
    row = ep.observe(Reply("So: [answer: no]", cot_reasoning="long reasoning",
                           reasoning="hidden", completion_tokens=12))
    assert ep.messages[-1] == {"role": "assistant", "content": "So: [answer: no]"}
    assert row["reply"] == "So: [answer: no]" and row["cot_reasoning"] == "long reasoning"
    assert row["reasoning"] == "hidden" and row["completion_tokens"] == 12
    assert row["correct"]


def test_estimate_covers_cot(shared_data):
    root = shared_data("already_said_that")
    samples = select_samples(load_samples(root), 2, 1)
    pool, _ = load_distractors(root, "which-is-heavier")
    direct = estimate_tokens("which-is-heavier", samples, pool, "S", 1, max_turns=20)
    cot = estimate_tokens("which-is-heavier", samples, pool, "S", 1, max_turns=20,
                          cot_messages={"reason": "Reason first.", "answer": "Answer now."})
    assert cot["turns"] == direct["turns"] == 40
    assert cot["requests"] == 2 * direct["requests"] == 80
    assert cot["completion_tokens"] == direct["completion_tokens"] + 100 * 40
    assert cot["reasoning_tokens"] == 100 * 40
    # each turn sends the chat twice (plus the system messages and the reasoning)
    assert cot["prompt_tokens"] > 2 * direct["prompt_tokens"]
    assert cot["prefill_tokens"] > direct["prefill_tokens"]


def test_estimate_cli_for_cot(cli, tmp_path, shared_data):
    data = shared_data("already_said_that")
    code, doc, err = cli("run", "already_said_that:distractorless", "--model", "random",
                         "--data-dir", data, "--runs-dir", tmp_path, "--n-samples", 2,
                         "--solver", "cot", "--estimate", "--json")
    assert code == 0, err
    assert doc["solver"] == "cot" and doc["estimate"]["reasoning_tokens"] == 200 * 100
    assert doc["estimate"]["requests"] == 2 * 200
    assert any("two requests per turn" in n for n in doc["notes"])
