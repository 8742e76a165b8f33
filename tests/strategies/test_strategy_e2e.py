"""`mindprobe run worldsense --prompting S` end to end against the local test server, one run
per strategy: the run's label, the wording recorded in the manifest, what was sent, and how
the replies were read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mindprobe.benchmarks.worldsense import strategies as st
from mindprobe.core.requests import replies_of
from mindprobe.core.store import read_records
from mindprobe.testing import TestServer

MODEL = "openai:test-model@{url}"


def _allowed(text: str) -> list[str]:
    if "TRUE" in text and "FALSE" in text:
        return ["TRUE", "FALSE"]
    if "POSSIBLE" in text:
        return ["POSSIBLE", "IMPOSSIBLE"]
    return ["1", "2", "3"]


def answer(body: dict) -> str:
    """A deterministic 'model': the first allowed answer, in the form the strategy asks for
    (a chain of thought ending with the answer line under CoT)."""
    text = body["messages"][-1]["content"]
    first = _allowed(text)[0]
    if "Answer: X" in text:
        return f"Step 1: read the description.\nStep 2: it is {first}, probably.\nAnswer: {first}"
    return first


def _run(cli, tmp_path, srv, *args):
    code, doc, err = cli("run", "worldsense:fresh", "--model", MODEL.format(url=srv.base_url),
                         "--runs-dir", tmp_path / "runs", "--json", "--limit", 12, *args)
    assert code == 0, err
    return doc


@pytest.mark.parametrize("strategy", [s for s in st.NAMES])
def test_each_strategy_end_to_end(cli, tmp_path, recorder, strategy):
    rec = recorder(answer)
    with TestServer(responder=rec) as srv:
        doc = _run(cli, tmp_path, srv, "--prompting", strategy, "--no-cache")
    label = st.label_of(strategy)
    run = Path(doc["run"])
    assert run.name == f"{label}___test-model"  # the model, not its address
    assert run.parent.name == "fresh"
    manifest = json.loads((run / "manifest.json").read_text())
    prompt = manifest["config"]["prompt"]
    assert manifest["prompting"] == label and prompt["strategy"] == strategy
    assert prompt == json.loads(json.dumps(st.describe(strategy, 3, prompt.get("examples"))))
    records = read_records(run / "records.jsonl")
    assert 12 <= len(records) <= 14
    assert all(r["resp"] for r in records)  # every reply was read as an answer
    assert doc["n_invalid"] == 0
    assert [k.split("/")[0] for k in doc["accuracy"]] == [label]
    bodies = rec.bodies
    assert len(bodies) == len(records)  # no re-asks were needed
    for body in bodies:
        last = body["messages"][-1]["content"]
        if strategy == "direct":
            assert last.endswith("No explanation, no other words.")
        elif strategy == "clarified":
            assert "In other words:" in last and " means " in last
        elif strategy == "cot":
            assert "think step by step" in last and body["max_tokens"] == st.COT_MAX_TOKENS
        elif strategy in st.INCONTEXT:
            assert len(body["messages"]) == 7  # 3 examples (user + assistant) + the question
            assert [m["role"] for m in body["messages"]][:2] == ["user", "assistant"]
        if strategy == "constrained":
            assert "grammar" in body
        if strategy != "cot":
            assert body["max_tokens"] == st.ANSWER_MAX_TOKENS
    if strategy in st.INCONTEXT:
        assert all(len(r["shots"]) == 3 for r in records)
        assert prompt["examples"]["source"].startswith("generated")
    if strategy == "cot":
        assert all("Step 1" in replies_of(r)[0] for r in records)  # the reasoning is kept


def test_incontext_examples_follow_the_category(cli, tmp_path, recorder):
    rec = recorder(answer)
    with TestServer(responder=rec) as srv:
        _run(cli, tmp_path, srv, "--prompting", "incontext-diffcat", "--shots", 2, "--no-cache")
    for body in rec.bodies:
        msgs = body["messages"]
        assert len(msgs) == 5
        question = _allowed(msgs[-1]["content"])
        for ex, gold in zip(msgs[0:4:2], msgs[1:4:2], strict=True):
            assert gold["content"] not in question  # another category's answer format
            assert ex["content"] != msgs[-1]["content"]


def test_cot_without_answer_line_is_reasked_then_invalid(cli, tmp_path, recorder):
    def hostile(body: dict) -> str:
        text = body["messages"][-1]["content"]
        if "Answer: X" in text and len(body["messages"]) == 1:
            return "I am sure it is TRUE, the answer is obviously TRUE."  # no answer line
        return "no idea"
    rec = recorder(hostile)
    with TestServer(responder=rec) as srv:
        doc = _run(cli, tmp_path, srv, "--prompting", "cot", "--no-cache")
    run = Path(doc["run"])
    records = read_records(run / "records.jsonl")
    assert all(r["resp"] == "" and len(replies_of(r)) == 2 for r in records)
    assert doc["n_invalid"] == len(records)
    reask = next(b for b in rec.bodies if len(b["messages"]) == 3)["messages"]
    assert reask[-1]["content"] == st.reask_message("cot", _allowed(reask[0]["content"]))


def test_logprob_scoring_with_strategies(cli, tmp_path):
    with TestServer(responder=answer) as srv:
        url = MODEL.format(url=srv.base_url)
        code, _, err = cli("run", "worldsense:fresh", "--model", url, "--prompting", "cot",
                           "--scoring", "logprob", "--runs-dir", tmp_path)
        assert code == 2 and "--scoring text" in err
        doc = _run(cli, tmp_path, srv, "--prompting", "clarified", "--scoring", "logprob")
    assert Path(doc["run"]).name.startswith("clarified_logprob___")


def test_shots_flag_is_typed_and_bounded(cli, tmp_path):
    code, _, err = cli("run", "worldsense:fresh", "--model", "random", "--prompting",
                       "incontext-iid", "--shots", 0, "--runs-dir", tmp_path)
    assert code == 2 and "--shots" in err
