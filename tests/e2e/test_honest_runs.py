"""Numbers that explain themselves, flags that mean what they say, servers that die."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from mindprobe.core.store import read_records
from mindprobe.models import parse_model_spec
from mindprobe.models.base import Request
from mindprobe.testing import TestServer


def test_unparsable_mr_gsm8k_replies_are_counted_and_explained(cli, tmp_path, shared_data):
    data = shared_data("mr_gsm8k")
    with TestServer(reply="TRUE") as srv:
        code, doc, err = cli("run", "mr_gsm8k:sample", "--model",
                             f"openai:test-model@{srv.base_url}", "--data-dir", data,
                             "--runs-dir", tmp_path, "--limit", 20, "--json")
    assert code == 0, err
    assert doc["n_unparsed"] == 20 and doc["invalid"] == {"count": 20, "of": 20, "rate": 1.0,
                                                          "kinds": {"unparsed": 20}}
    assert any("did not follow the reply format" in w for w in doc["warnings"])
    assert doc["tables"]["metrics"][0]["unparsed"] == 20
    assert any(n.startswith("95% Wilson intervals: TPR") for n in doc["notes"])


def test_small_samples_get_a_labelled_interval_never_nan(cli, tmp_path):
    code, doc, err = cli("run", "worldsense:fresh", "--model", "random", "--limit", 30,
                         "--runs-dir", tmp_path, "--json")
    assert code == 0, err
    rows = next(iter(doc["tables"].values()))
    assert all(r["ci_low"] is not None and r["ci_high"] is not None for r in rows)
    assert all(r["ci_low"] <= r["accuracy"] <= r["ci_high"] for r in rows)
    assert {r["ci"] for r in rows} <= {"upstream", "Wilson"} and "Wilson" in {r["ci"] for r in rows}
    h = doc["headline"]
    assert h["ci_low"] < h["value"] < h["ci_high"] and h["ci_method"] in ("upstream", "Wilson")
    assert all(r["bias ±95"] is None or r["bias ±95"] > 0 for r in rows)  # never "± 0"
    if any(r["bias ±95"] is None for r in rows):
        assert any("bias ±95 is –" in n for n in doc["notes"])


def test_intervals_bracket_the_balanced_accuracy_they_stand_beside(cli, tmp_path):
    """Always answering "1": Compl's balanced accuracy is 50% while the raw share correct is
    about two thirds; an interval must be around the number shown, within [0, 100]."""
    with TestServer(reply="1") as srv:
        code, doc, err = cli("run", "worldsense:fresh", "--model",
                             f"openai:test-model@{srv.base_url}", "--limit", 120,
                             "--runs-dir", tmp_path, "--json")
    assert code == 0, err
    rows = next(iter(doc["tables"].values()))
    assert any(r["problem"].startswith("Compl") for r in rows)
    for r in rows:
        assert 0 <= r["ci_low"] <= r["accuracy"] <= r["ci_high"] <= 100, r


def test_constrained_uses_each_servers_real_mechanism():
    m = parse_model_spec("openai:m@127.0.0.1:9")
    req = Request(messages=[{"role": "user", "content": "?"}], choices=["A", "B"], constrain=True)
    m._set_mechanism({"llamacpp"})
    assert "grammar" in m.build_body(req)[1] and m.can("grammar")
    m._set_mechanism({"vllm"})
    assert m.build_body(req)[1]["guided_choice"] == ["A", "B"]
    m._set_mechanism({"someone-else"})
    assert not m.can("grammar") and "grammar" not in m.build_body(req)[1]
    o = parse_model_spec("openai:m@127.0.0.1:9")
    o.base_url = "https://api.openai.com/v1"
    o._set_mechanism({"system"})
    fmt = o.build_body(req)[1]["response_format"]
    assert fmt["json_schema"]["schema"]["properties"]["answer"]["enum"] == ["A", "B"]


def test_constrained_is_refused_where_the_server_has_no_mechanism(cli, tmp_path):
    with TestServer(reply="TRUE", owned_by="someone-else") as srv:
        code, _, err = cli("run", "worldsense:fresh", "--model",
                           f"openai:test-model@{srv.base_url}", "--prompting", "constrained",
                           "--runs-dir", tmp_path, "--limit", 5)
        assert code == 2 and "constrained-answer mechanism" in err
        assert srv.stats()["requests"].get("/v1/chat/completions", 0) == 0


def test_constrained_replies_outside_the_set_stop_the_run(cli, tmp_path):
    """A server that says it has grammars but ignores them is caught at its first reply."""
    with TestServer(reply="hello") as srv:
        code, _, err = cli("run", "worldsense:fresh", "--model",
                           f"openai:test-model@{srv.base_url}", "--prompting", "constrained",
                           "--runs-dir", tmp_path, "--limit", 5)
    assert code == 2 and "did not enforce the constrained answer" in err and "'hello'" in err
    assert "Traceback" not in err


def test_check_constrained_allows_a_reply_cut_by_the_token_cap():
    from mindprobe.core.session import check_constrained
    from mindprobe.errors import ModelError
    from mindprobe.models import parse_model_spec
    from mindprobe.models.base import Completion

    model = parse_model_spec("random")
    check_constrained(model, ["TRUE", "FALSE"], Completion(text=" TRUE\n"))
    check_constrained(model, ["IMPOSSIBLE"], Completion(text="IMPOSS", finish_reason="length"))
    check_constrained(model, ["TRUE"], Completion(text='{"answer":"TR', finish_reason="length"))
    check_constrained(model, ["TRUE"], Completion(text="", finish_reason="stop"))  # a refusal
    with pytest.raises(ModelError):
        check_constrained(model, ["TRUE", "FALSE"], Completion(text="true", finish_reason="stop"))


@pytest.mark.parametrize("content", ["{not json", "[]"])
def test_runs_lists_a_corrupt_manifest_without_hiding_the_others(cli, tmp_path, content):
    for tag in ("a", "b"):
        assert cli("run", "worldsense:fresh", "--model", "random", "--limit", 10,
                   "--runs-dir", tmp_path, "--name", tag)[0] == 0
    bad = next(tmp_path.rglob("*__a/manifest.json"))
    bad.write_text(content)
    code, rows, err = cli("runs", "--runs-dir", tmp_path, "--json")
    assert code == 0 and len(rows) == 2 and "unreadable run" in err
    by_status = {r["status"]: r for r in rows}
    assert by_status["finished"]["headline"]["name"] == "accuracy"
    assert "manifest.json" in by_status["unreadable"]["problem"]
    code, _, err = cli("runs", "--runs-dir", tmp_path)
    assert code == 0 and "Traceback" not in err


def test_changed_config_names_the_setting(cli, tmp_path):
    args = ["run", "worldsense:fresh", "--model", "random", "--limit", 10, "--runs-dir", tmp_path]
    assert cli(*args)[0] == 0
    code, _, err = cli(*args, "--reasks", 2)
    assert code == 2 and "reasks: 1 (recorded) vs 2 (now)" in err and "--name" in err


def test_generated_sets_are_runnable_and_exportable(cli, tmp_path):
    out = tmp_path / "fresh_set"
    assert cli("generate", "worldsense", "--seed", 3, "--n", 2, "--out", out)[0] == 0
    code, doc, err = cli("run", "worldsense", "--model", "random", "--data-file",
                         out / "trials.jsonl.bz2", "--runs-dir", tmp_path / "runs", "--json")
    assert code == 0, err and doc["n_trials"] > 0
    run = next((tmp_path / "runs").rglob("manifest.json")).parent
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["data"]["file"].endswith("trials.jsonl.bz2")
    code, _, err = cli("export", "worldsense", "--run", run, "--out", tmp_path / "exp")
    assert code == 0, err
    assert (tmp_path / "exp" / "trials.jsonl.bz2").read_bytes() == \
        (out / "trials.jsonl.bz2").read_bytes()
    assert cli("generate", "worldsense", "--n", 0, "--out", tmp_path / "x")[0] == 2


@pytest.mark.parametrize("make", ["file", "readonly"])
def test_unusable_runs_dir_is_one_line(cli, tmp_path, make):
    target = tmp_path / "runs"
    if make == "file":
        target.write_text("")
    else:
        target.mkdir()
        target.chmod(0o500)
        if os.access(target, os.W_OK):  # root ignores permissions
            pytest.skip("running as root: a read-only folder is still writable")
    code, _, err = cli("run", "worldsense:fresh", "--model", "random", "--limit", 5,
                       "--runs-dir", target)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_estimate_needs_no_api_key(tmp_path, shared_data):
    data = shared_data("already_said_that")
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env["MINDPROBE_CACHE_DIR"] = str(tmp_path / "cache")
    proc = subprocess.run(
        [sys.executable, "-m", "mindprobe.cli", "run", "already_said_that", "--model",
         "openai:gpt-4o", "--estimate", "--price", "2.5,10,1.25", "--n-samples", "3",
         "--data-dir", str(data), "--runs-dir", str(tmp_path / "runs")],
        env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "provider prompt caching" in proc.stderr and "prefix reuse" in proc.stderr
    assert not (tmp_path / "runs").exists()


@pytest.mark.slow
def test_a_server_that_dies_stops_the_run_and_keeps_records(spawn, cli, tmp_path):
    runs = tmp_path / "runs"
    srv = TestServer(reply="TRUE", latency=0.01).start()
    port = srv.port
    args = ["run", "worldsense:fresh", "--model", f"openai:test-model@127.0.0.1:{port}",
            "--runs-dir", runs, "--concurrency", 4, "--max-attempts", 2, "--no-cache"]
    proc = spawn(args)
    deadline = time.time() + 60
    records = None
    while time.time() < deadline:
        hits = list(runs.glob("worldsense/fresh/*/records.jsonl"))
        if hits and hits[0].read_bytes().count(b"\n") >= 30:
            records = hits[0]
            break
        time.sleep(0.05)
    assert records is not None
    srv.stop()
    t0 = time.time()
    try:
        _, err = proc.communicate(timeout=90)
    finally:
        proc.send_signal(signal.SIGKILL)
    assert proc.returncode == 2 and "stopped answering" in err, err
    assert time.time() - t0 < 60 and "Traceback" not in err and "resume with" in err
    kept = read_records(records)
    assert len(kept) >= 30 and not any("error" in r for r in kept)
    with TestServer(reply="TRUE", port=port):
        code, doc, err = cli(*args, "--json")
    assert code == 0, err
    ids = [r["id"] for r in read_records(records)]
    assert len(ids) == len(set(ids)) == doc["n_trials"]
