"""Already Said That `--solver cot`: the reasoning never enters later prompts (only the answer
tag does, upstream's persistent_memory=False), prompts grow linearly, tokens are reported per
solver, and --estimate prices the CoT solver's extra output."""

from __future__ import annotations

import json
import re
from pathlib import Path

from mindprobe.benchmarks.already_said_that import (
    estimate_tokens,
    load_distractors,
    load_samples,
    select_samples,
)
from mindprobe.benchmarks.already_said_that.episode import Episode, Reply, cot_history
from mindprobe.benchmarks.already_said_that.prompt import COT_INSTRUCTION
from mindprobe.core.store import read_records
from mindprobe.testing import TestServer

MODEL = "openai:test-model@{url}"


def cot_reply(body: dict) -> str:
    """Always-correct-ish CoT: reasoning with a marker naming the turn, then the tag (always
    `no`, so a chat ends at its first repeated word)."""
    n = sum(1 for m in body["messages"] if m["role"] == "user")
    return (f"SECRET-REASONING-{n}: I list the words shown so far and compare.\n"
            "The word has not been shown.\n[answer: no]")


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
    assert manifest["config"]["cot_instruction"] == COT_INSTRUCTION
    assert len(rec.bodies) > 3
    for body in rec.bodies:
        msgs = body["messages"]
        assert msgs[0]["role"] == "system"
        # no reasoning of an earlier turn is ever re-sent
        assert "SECRET-REASONING" not in json.dumps(msgs)
        assert all(m["content"] == "[answer: no]" for m in msgs if m["role"] == "assistant")
        # the CoT request rides on the current user message only
        users = [m["content"] for m in msgs if m["role"] == "user"]
        assert users[-1].endswith(COT_INSTRUCTION)
        assert not any(COT_INSTRUCTION in u for u in users[:-1])
        assert all(re.fullmatch(r"MAIN TASK - [a-z]+", u) for u in users[:-1])
        assert body["max_tokens"] == 1024
    # linear growth: each turn adds exactly one user and one assistant message
    sizes = [len(b["messages"]) for b in rec.bodies]
    for prev, cur in zip(sizes, sizes[1:], strict=False):
        assert cur == prev + 2 or cur == 2  # next turn, or a new chat
    records = read_records(run / "records.jsonl")
    turns = [t for r in records for t in r["transcript"]]
    assert all(t["reply"].startswith("SECRET-REASONING") for t in turns)  # kept in the record
    assert all(t["history"] == "[answer: no]" for t in turns)
    assert doc["tokens"]["solver"] == "cot" and doc["tokens"]["turns"] == len(turns)


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


def test_cot_history_without_a_tag_is_the_last_line():
    assert cot_history("think\n[answer: yes] more [answer: no]") == "[answer: yes]"
    assert cot_history("reasoning\n\nSo it is new.\n") == "So it is new."
    assert cot_history("") == ""


def test_episode_reply_history_is_what_later_turns_see(shared_data):
    root = shared_data("already_said_that")
    words = select_samples(load_samples(root), 1, 1)[0]
    pool, example = load_distractors(root, "distractorless")
    ep = Episode(variant="distractorless", idx=0, seed=1, words=words, pool=pool,
                 example=example, max_turns=3)
    ep.next_user_message()
    row = ep.observe(Reply("long reasoning\n[answer: no]", history="[answer: no]",
                           reasoning="hidden", completion_tokens=12))
    assert ep.messages[-1] == {"role": "assistant", "content": "[answer: no]"}
    assert row["reply"] == "long reasoning\n[answer: no]" and row["history"] == "[answer: no]"
    assert row["reasoning"] == "hidden" and row["completion_tokens"] == 12
    assert row["correct"]


def test_estimate_covers_cot(shared_data):
    root = shared_data("already_said_that")
    samples = select_samples(load_samples(root), 2, 1)
    pool, example = load_distractors(root, "which-is-heavier")
    direct = estimate_tokens("which-is-heavier", samples, pool, example, 1, max_turns=20)
    cot = estimate_tokens("which-is-heavier", samples, pool, example, 1, max_turns=20,
                          solver="cot")
    assert cot["turns"] == direct["turns"] == 40
    assert cot["completion_tokens"] == direct["completion_tokens"] + 100 * 40
    assert cot["reasoning_tokens"] == 100 * 40
    extra = cot["prompt_tokens"] - direct["prompt_tokens"]
    assert 0 < extra < 40 * 60  # only the instruction on the current message, not accumulated
    assert cot["prefill_tokens"] > direct["prefill_tokens"]


def test_estimate_cli_for_cot(cli, tmp_path, shared_data):
    data = shared_data("already_said_that")
    code, doc, err = cli("run", "already_said_that:distractorless", "--model", "random",
                         "--data-dir", data, "--runs-dir", tmp_path, "--n-samples", 2,
                         "--solver", "cot", "--estimate", "--json")
    assert code == 0, err
    assert doc["solver"] == "cot" and doc["estimate"]["reasoning_tokens"] == 200 * 100
    assert any("reasoning tokens per turn" in n for n in doc["notes"])
