"""The embedded instruct model (`local:smollm2`, SmolLM2-135M-Instruct) end to end: all five
benchmarks through the paper's chat protocol, chosen because its GGUF carries a chat template
(never because of the spec), at sizes that keep the suite's time; and the same file given by
path as a user's own GGUF. Skipped with the command that fetches it when it is absent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mindprobe.core.store import read_records

pytestmark = pytest.mark.slow
#: One engine thread: the test machine's cores are shared (see `models.local.default_threads`).
ENGINE = ("--threads", 1)


def _records(runs: Path) -> tuple[dict, list[dict]]:
    (records,) = runs.rglob("records.jsonl")
    manifest = json.loads((records.parent / "manifest.json").read_text())
    return manifest, read_records(records)


def _chat_run(manifest: dict, records: list[dict]) -> None:
    """Every item answered (no internal error) by a model recorded as a chat model."""
    assert records and not [r["error"] for r in records if "error" in r]
    assert manifest["models"]["model"]["protocol"]["kind"] == "chat"
    assert "chat template" in manifest["models"]["model"]["protocol"]["why"]


@pytest.fixture(params=["embedded", "by-path"])
def instruct(request, smollm2_gguf) -> str:
    return "local:smollm2" if request.param == "embedded" else f"local:{smollm2_gguf}"


def test_worldsense_sends_chat_requests_and_parses_text_answers(cli, tmp_path, instruct):
    code, doc, err = cli("run", "worldsense:fresh", "--model", instruct, "--limit", 4, *ENGINE,
                         "--runs-dir", tmp_path, "--json")
    assert code == 0, err
    assert "the paper's chat protocol, text answers parsed (chat template in" in \
        " ".join(err.split())
    manifest, records = _records(tmp_path)
    _chat_run(manifest, records)
    assert manifest["config"]["scoring"] == "text"
    for r in records:  # a chat request, its reply parsed: never log-probabilities
        assert r["request"][0]["messages"][0]["role"] == "user" and "reply" in r["request"][0]
        assert "resp" in r and "logprobs" not in json.dumps(r["request"])


def test_already_said_that_direct(cli, tmp_path, shared_data):
    code, doc, err = cli("run", "already_said_that:which-is-heavier", "--model", "local:smollm2",
                         "--solver", "direct", "--n-samples", 1, "--max-turns", 3,
                         "--max-tokens", 24, "--temperature", 0, *ENGINE,
                         "--data-dir", shared_data("already_said_that"), "--runs-dir", tmp_path,
                         "--json")
    assert code == 0, err
    assert ("(chat template in local:smollm2's GGUF (tokenizer.chat_template): an instruct "
            "model: the chat model's protocol)") in " ".join(err.split())
    manifest, records = _records(tmp_path)
    _chat_run(manifest, records)
    assert "base_model" not in manifest["config"]  # upstream's chat solver, not the base one
    assert records[0]["transcript"]


def test_mr_gsm8k(cli, tmp_path, shared_data):
    code, doc, err = cli("run", "mr_gsm8k:sample", "--model", "local:smollm2", "--limit", 2,
                         "--max-tokens", 32, *ENGINE, "--data-dir", shared_data("mr_gsm8k"),
                         "--runs-dir", tmp_path, "--json")
    assert code in (0, 1), err
    manifest, records = _records(tmp_path)
    _chat_run(manifest, records)
    assert doc["n_errors"] == 0 and doc["n_records"] == 2


def test_sort(cli, tmp_path, shared_data, monkeypatch):
    data = shared_data("sort")
    monkeypatch.setenv("MINDPROBE_DATA_DIR", str(data.parent))  # upstream's prompt files
    code, doc, err = cli("run", "sort:250-20", "--model", "local:smollm2", "--data-dir", data,
                         "--books", "73017", "--limit", 2, *ENGINE, "--runs-dir", tmp_path,
                         "--json")
    assert code == 0, err
    manifest, records = _records(tmp_path)
    _chat_run(manifest, records)
    assert all(r["answer"] in ("A", "B") for r in records)


def test_fanoutqa_closed_book(cli, tmp_path, shared_data):
    code, doc, err = cli("run", "fanoutqa", "--model", "local:smollm2", "--limit", 2,
                         "--max-tokens", 32, *ENGINE, "--data-dir", shared_data("fanoutqa"),
                         "--runs-dir", tmp_path, "--json")
    assert code == 0, err
    manifest, records = _records(tmp_path)
    _chat_run(manifest, records)
    assert doc["variant"] == "closedbook" and doc["n_errors"] == 0
    assert all(isinstance(r["answer"], str) for r in records)


def test_profile_plan_states_its_expected_time_from_the_engine_s_speed(cli, tmp_path,
                                                                       shared_data):
    """The quick profile's plan on the instruct model (WorldSense's data only: the others are
    said missing) times its work with the engine's measured speed."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "worldsense").symlink_to(shared_data("worldsense"))
    code, doc, err = cli("profile", "--model", "local:smollm2", "--size", "quick", "--dry-run",
                         "--data-dir", tmp_path / "data", "--runs-dir", tmp_path / "runs",
                         "--json")
    assert code == 0, err
    speed = doc["engine speed"]
    assert speed["prefill_per_s"] > 0 and speed["generate_per_s"] > 0
    (row,) = [r for r in doc["plan"] if r["benchmark"] == "worldsense"]
    expected = (row["expected prefill"] / speed["prefill_per_s"]
                + row["expected completion"] / speed["generate_per_s"]
                + row["expected requests"] * speed["overhead_s"])
    assert row["expected seconds"] == pytest.approx(expected, abs=0.1)
    assert "time ~" in err and "measured now on this machine's engine" in " ".join(err.split())
    assert not list((tmp_path / "runs").rglob("records.jsonl"))  # nothing was asked
