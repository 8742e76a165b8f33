"""Already Said That through the CLI: all variants side by side, JSON shape, estimates, resume."""

from __future__ import annotations

import json

from mindprobe.benchmarks.already_said_that import METRIC_NAMES
from mindprobe.cli import main
from mindprobe.core.store import read_records
from mindprobe.testing import TestServer


def _cli(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_all_variants_json(shared_data, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MINDPROBE_CACHE_DIR", str(tmp_path / "cache"))
    data = shared_data("already_said_that")
    code, out, err = _cli(capsys, "run", "already_said_that:all", "--model", "random",
                          "--data-dir", data, "--runs-dir", tmp_path, "--n-samples", 40, "--json")
    assert code == 0, err
    doc = json.loads(out)["variants"]
    assert list(doc) == ["which-is-heavier", "first-letters", "ambiguous-sentences",
                         "reverse-sort-words-eng", "distractorless"]
    for variant, m in doc.items():
        assert all(name in m for name in METRIC_NAMES), variant
        assert m["usage"]["errors"] == 0 and m["violation_rate"] == 0.0
    assert doc["distractorless"]["avg_distractor_accuracy"] is None  # NaN -> null
    assert "all variants" in err  # tables go to stderr under --json
    rec = read_records(next(tmp_path.glob("already_said_that/which-is-heavier/*/records.jsonl")))[0]
    assert {"num_turns", "num_distractors", "end", "transcript"} <= set(rec)


def test_single_variant_json_is_keyed_by_variant(shared_data, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MINDPROBE_CACHE_DIR", str(tmp_path / "cache"))
    data = shared_data("already_said_that")
    code, out, _ = _cli(capsys, "run", "already_said_that", "--model", "random", "--data-dir",
                        data, "--runs-dir", tmp_path, "--n-samples", 5, "--json")
    doc = json.loads(out)
    assert code == 0 and doc["variant"] == "reverse-sort-words-eng"
    assert doc["benchmark"] == "already_said_that" and doc["headline"]["name"] == "avg_num_turns"
    assert {"run", "tables", "usage", "warnings"} <= set(doc)


def test_estimate_prints_resend_vs_reuse(shared_data, tmp_path, capsys):
    data = shared_data("already_said_that")
    code, out, err = _cli(capsys, "run", "already_said_that:distractorless", "--model", "random",
                          "--data-dir", data, "--runs-dir", tmp_path, "--n-samples", 3,
                          "--estimate", "--price", "2.5,10")
    assert code == 0
    assert "resend every turn" in err and "prefix reuse" in err and "cost" in err
    assert "prices (USD per million tokens): input 2.5, output 10" in " ".join(err.split())
    assert not list(tmp_path.glob("already_said_that/*"))  # nothing was run


def test_chat_over_http_resumes_per_sample(shared_data, tmp_path, capsys, monkeypatch):
    """A scripted model that always answers 'no' over HTTP: full chats, one record each."""
    monkeypatch.setenv("MINDPROBE_CACHE_DIR", str(tmp_path / "cache"))
    data = shared_data("already_said_that")
    with TestServer(reply="[answer: no]") as srv:
        args = ["run", "already_said_that:distractorless", "--model",
                f"openai:test-model@{srv.base_url}", "--data-dir", data, "--runs-dir", tmp_path,
                "--n-samples", 6, "--no-cache", "--json"]
        code, out, err = _cli(capsys, *args, "--limit", 3)
        assert code == 0, err
        first = srv.stats()["requests"]["/v1/chat/completions"]
        code, out, err = _cli(capsys, *args)
        assert code == 0, err
        second = srv.stats()["requests"]["/v1/chat/completions"] - first
    records = read_records(next(tmp_path.glob("already_said_that/distractorless/*/records.jsonl")))
    assert sorted(r["id"] for r in records) == [str(i) for i in range(6)]
    turns = {r["id"]: r["num_turns"] + 1 for r in records}  # the failing turn was asked too
    assert first == sum(turns[str(i)] for i in range(3))
    assert second == sum(turns[str(i)] for i in range(3, 6))  # finished samples not re-run
    doc = json.loads(out)
    assert doc["false_negative_rate"] + doc["false_positive_rate"] + doc["violation_rate"] == 1.0


def test_no_spread_gives_no_interval_rather_than_a_zero_width_one(shared_data, tmp_path, capsys,
                                                                 monkeypatch):
    monkeypatch.setenv("MINDPROBE_CACHE_DIR", str(tmp_path / "cache"))
    data = shared_data("already_said_that")
    with TestServer(reply="hello") as srv:  # never a valid answer: every chat ends at once
        code, out, err = _cli(capsys, "run", "already_said_that:distractorless", "--model",
                              f"openai:test-model@{srv.base_url}", "--data-dir", data,
                              "--runs-dir", tmp_path, "--n-samples", 4, "--max-turns", 5,
                              "--json")
    assert code == 0, err
    head = json.loads(out)["headline"]
    assert head["ci_low"] is None and head["ci_high"] is None and head["ci_method"].startswith("none")
    assert any("same number of turns" in n for n in json.loads(out)["notes"])
    assert json.loads(out)["invalid"] == {"count": 4, "of": 4, "rate": 1.0}


def test_chat_models_get_upstreams_request_without_stop_strings(shared_data, tmp_path, capsys,
                                                                monkeypatch):
    """Answer ends are for base models on the completion path: a chat model's requests carry
    no stop strings, and its manifest no answer_end."""
    monkeypatch.setenv("MINDPROBE_CACHE_DIR", str(tmp_path / "cache"))
    bodies: list[dict] = []

    def respond(body: dict) -> str:
        bodies.append(body)
        return "[answer: no]"

    with TestServer(responder=respond) as srv:
        code, _, err = _cli(capsys, "run", "already_said_that:distractorless", "--model",
                            f"openai:test-model@{srv.base_url}", "--data-dir",
                            shared_data("already_said_that"), "--runs-dir", tmp_path,
                            "--n-samples", 1, "--max-turns", 3, "--no-cache", "--json")
    assert code == 0, err
    assert bodies and all("stop" not in b for b in bodies)
    manifest = json.loads(next(tmp_path.glob("already_said_that/*/*/manifest.json")).read_text())
    assert "answer_end" not in manifest["config"]
