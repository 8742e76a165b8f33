"""`mindprobe run` end to end against a real OpenAI-compatible server on 127.0.0.1.

Resume, interruption, faults, cache, exit codes and secrets are exercised for real: the
process is killed with SIGKILL / SIGINT, and faults are injected by the server.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from mindprobe.core.requests import replies_of
from mindprobe.core.store import read_records
from mindprobe.testing import TestServer
from mindprobe.testing.responders import worldsense_answer

MODEL = "openai:test-model@{url}"


def _run_dir(root: Path) -> Path:
    return next(root.glob("worldsense/fresh/basic___*"))


def _wait_for_records(runs: Path, n: int, timeout: float = 60) -> Path | None:
    """The records file once it holds at least `n` lines (None on timeout)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        hits = list(runs.glob("worldsense/fresh/*/records.jsonl"))
        if hits and hits[0].read_bytes().count(b"\n") >= n:
            return hits[0]
        time.sleep(0.05)
    return None


def _metrics(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k not in ("usage", "run")}


def test_run_json_usage_and_records(cli, tmp_path):
    with TestServer(responder=worldsense_answer) as srv:
        code, doc, err = cli("run", "worldsense:fresh", "--model", MODEL.format(url=srv.base_url),
                             "--runs-dir", tmp_path / "runs", "--json", "--limit", 40)
    assert code == 0, err
    assert set(doc["usage"]) >= {"requests", "prompt_tokens", "cached_prompt_tokens",
                                 "completion_tokens", "errors"}
    run = _run_dir(tmp_path / "runs")
    records = read_records(run / "records.jsonl")
    n = len(records)
    assert 40 <= n <= 42  # --limit is rounded up to whole tuples (2 or 3 trials)
    assert len({r["id"] for r in records}) == n and len({r["tuple_ID"] for r in records}) * 2 <= n
    assert doc["usage"]["requests"] == n and doc["usage"]["errors"] == 0
    assert all(r["resp"] in r["expectedresp"] for r in records)  # "(3)" normalised to "3"
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "finished" and manifest["n_items"] == n
    assert 0.0 <= doc["accuracy"]["basic/test-model"]["ALL"]["mean"] <= 1


@pytest.mark.slow
def test_kill9_then_resume_equals_uninterrupted(cli, spawn, tmp_path):
    runs = tmp_path / "runs"
    with TestServer(responder=worldsense_answer, latency=0.02) as srv:
        args = ["run", "worldsense:fresh", "--model", MODEL.format(url=srv.base_url),
                "--runs-dir", runs, "--concurrency", 4, "--no-cache"]
        proc = spawn(args)
        records_path = _wait_for_records(runs, 60)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert records_path is not None, proc.stderr.read()
        with open(records_path, "ab") as f:  # what a kill in the middle of a write leaves
            f.write(b'{"id": "123", "Key": 12')
        before = read_records(records_path)
        assert 60 <= len(before) < 504
        srv.reset_stats()
        code, doc, err = cli(*args, "--json")
        assert code == 0, err
        resumed_requests = srv.stats()["requests"]["/v1/chat/completions"]
        code2, doc2, _ = cli("run", "worldsense:fresh", "--model", MODEL.format(url=srv.base_url),
                             "--runs-dir", tmp_path / "fresh", "--no-cache", "--json")
    assert code2 == 0
    after = read_records(records_path)
    assert len(after) == 504 and len({r["id"] for r in after}) == 504
    assert resumed_requests == 504 - len(before)  # finished items were not asked again
    assert _metrics(doc) == _metrics(doc2)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.slow
def test_ctrl_c_keeps_results_and_prints_resume_hint(cli, spawn, tmp_path, sig):
    """Ctrl-C, and SIGTERM as `timeout`, SLURM or `docker stop` send it."""
    runs = tmp_path / "runs"
    with TestServer(responder=worldsense_answer, latency=0.05) as srv:
        args = ["run", "worldsense:fresh", "--model", MODEL.format(url=srv.base_url),
                "--runs-dir", runs, "--concurrency", 2, "--no-cache"]
        proc = spawn(args)
        assert _wait_for_records(runs, 10) is not None
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == (143 if sig == signal.SIGTERM else 130), err  # 128 + signal
        assert "Resume with:" in err and "Traceback" not in err
        run = _run_dir(runs)
        assert json.loads((run / "manifest.json").read_text())["status"] == "interrupted"
        n = len(read_records(run / "records.jsonl"))
        assert n >= 10
        code, _, _ = cli(*args)
        assert code == 0
        assert len(read_records(run / "records.jsonl")) == 504


def test_sigterm_interrupts_a_background_job_that_ignores_sigint(tmp_path):
    """A job started with `&` from a script inherits SIGINT ignored; SIGTERM must still end it
    as an interrupted run, not be swallowed."""
    import os
    import subprocess
    import sys

    runs = tmp_path / "runs"
    env = {**os.environ, "MINDPROBE_CACHE_DIR": str(tmp_path / "cache")}
    with TestServer(responder=worldsense_answer, latency=0.05) as srv:
        proc = subprocess.Popen(
            [sys.executable, "-m", "mindprobe.cli", "run", "worldsense:fresh", "--model",
             MODEL.format(url=srv.base_url), "--runs-dir", str(runs), "--concurrency", "2",
             "--no-cache"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
        assert _wait_for_records(runs, 5) is not None
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143 and "Resume with:" in err, err
    assert json.loads((_run_dir(runs) / "manifest.json").read_text())["status"] == "interrupted"


@pytest.mark.slow
def test_faults_are_retried_to_success(cli, tmp_path):
    with TestServer(responder=worldsense_answer, fault_500=0.1, fault_429=0.1, fault_drop=0.1,
                    fault_malformed=0.1, retry_after=0, seed=1) as srv:
        code, doc, err = cli("run", "worldsense:fresh", "--model", MODEL.format(url=srv.base_url),
                             "--runs-dir", tmp_path / "runs", "--limit", 60, "--json",
                             "--max-attempts", 10, "--no-cache")
        faults = srv.stats()["faults"]
    assert code == 0, err
    n = len(read_records(_run_dir(tmp_path / "runs") / "records.jsonl"))
    assert doc["usage"]["errors"] == 0 and doc["usage"]["requests"] == n >= 60
    assert sum(faults.values()) >= 10


def test_failed_items_are_recorded_then_retried(cli, tmp_path):
    runs = tmp_path / "runs"
    with TestServer(responder=worldsense_answer, fault_500=1.0) as srv:
        port = srv.port
        args = ["run", "worldsense:fresh", "--model", MODEL.format(url=srv.base_url),
                "--runs-dir", runs, "--limit", 10, "--max-attempts", 2, "--no-cache"]
        code, _, err = cli(*args)
    assert code == 1
    assert "--retry-errors" in err
    records = read_records(_run_dir(runs) / "records.jsonl")
    n = len(records)
    assert n >= 10 and all("error" in r for r in records)
    with TestServer(responder=worldsense_answer, port=port) as srv2:
        code, _, _ = cli(*args)  # without --retry-errors: nothing to do, still exit 1
        assert code == 1 and srv2.stats()["requests"]["/v1/chat/completions"] == 0
        code, _, err = cli(*args, "--retry-errors")
    assert code == 0, err
    records = read_records(_run_dir(runs) / "records.jsonl")
    assert len(records) == n and not any("error" in r for r in records)


def test_cache_means_never_paying_twice(cli, tmp_path):
    cache = tmp_path / "c.sqlite"
    with TestServer(responder=worldsense_answer) as srv:
        base = ["run", "worldsense:fresh", "--model", MODEL.format(url=srv.base_url),
                "--limit", 30, "--cache", cache, "--json"]
        code, doc1, _ = cli(*base, "--runs-dir", tmp_path / "a")
        first = srv.stats()["requests"]["/v1/chat/completions"]
        code, doc2, _ = cli(*base, "--runs-dir", tmp_path / "b")
        second = srv.stats()["requests"]["/v1/chat/completions"] - first
        code, doc3, _ = cli(*base[:-3], "--no-cache", "--json", "--runs-dir", tmp_path / "c")
        third = srv.stats()["requests"]["/v1/chat/completions"] - first - second
    n = first
    assert n >= 30 and (second, third) == (0, n)
    assert doc2["usage"]["cache_hits"] == n and doc2["usage"]["requests"] == 0
    assert _metrics(doc1) == _metrics(doc2) == _metrics(doc3)


def test_api_key_never_written(cli, tmp_path, monkeypatch):
    secret = "sk-test-very-secret-key-1234"
    monkeypatch.setenv("MINDPROBE_API_KEY", secret)
    with TestServer(responder=worldsense_answer, api_key=secret) as srv:
        code, _, err = cli("run", "worldsense:fresh", "--model", MODEL.format(url=srv.base_url),
                           "--runs-dir", tmp_path / "runs", "--limit", 10,
                           "--cache", tmp_path / "c.sqlite")
    assert code == 0, err
    assert secret not in err
    for path in [*tmp_path.rglob("*")]:
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


def test_user_errors_are_one_line_exit_2(cli, tmp_path):
    with TestServer(models=["other"]) as srv:
        code, _, err = cli("run", "worldsense:fresh", "--model", MODEL.format(url=srv.base_url),
                           "--runs-dir", tmp_path)
    assert code == 2 and "unknown model 'test-model'" in err and "Traceback" not in err
    cases = [
        (["run", "nosuchbench", "--model", "random"], "unknown benchmark"),
        (["run", "worldsense:nope", "--model", "random"], "unknown variant"),
        (["run", "worldsense:fresh", "--model", "gpt4"], "unknown model spec"),
        (["run", "worldsense:fresh", "--model", "random", "--bogus"], "unrecognized arguments"),
        (["run", "worldsense:fresh", "--model", "openai:m@http://127.0.0.1:9"], "cannot reach"),
        (["run", "worldsense", "--model", "random", "--data-dir", tmp_path / "empty"],
         "missing data file"),
        (["run", "worldsense:fresh", "--model", "random", "--prompting", "constrained",
          "--runs-dir", tmp_path], "constrained"),
    ]
    for args, message in cases:
        code, _, err = cli(*args)
        assert code == 2, (args, err)
        assert message in err and "Traceback" not in err, (args, err)
        assert len(err.strip().splitlines()) == 1, err


def test_random_model_and_listing(cli, tmp_path):
    code, doc, _ = cli("run", "worldsense:fresh", "--model", "random", "--runs-dir", tmp_path,
                       "--json")
    assert code == 0
    acc = doc["accuracy"]["basic/random"]["ALL"]["mean"]
    assert 0.35 < acc < 0.65  # chance level
    code, out, _ = cli("runs", "--runs-dir", tmp_path)
    assert code == 0 and "worldsense/fresh/basic" in out and "random" in out and "finished" in out and "504/504" in out
    code, out, _ = cli("list")
    assert code == 0 and "worldsense" in out and "ood-size" in out
    code, doc2, _ = cli("analyse", "worldsense", "--run", next(tmp_path.glob("worldsense/fresh/*")),
                        "--json")
    assert code == 0 and doc2["accuracy"]["basic/random"]["ALL"]["mean"] == acc


def test_invalid_answers_are_reasked_then_blank(cli, tmp_path):
    """Spec §4: re-ask insisting on the options; still invalid -> ""."""
    def stubborn(body: dict) -> str:
        n = len(body["messages"])
        assert n == 1 or body["messages"][-1]["content"].startswith(
            "Only respond with one of these options: ")
        return "I am not sure." if n < 5 else worldsense_answer(body)

    with TestServer(responder=stubborn) as srv:
        url = MODEL.format(url=srv.base_url)
        for reasks, runs in ((1, "one"), (2, "two")):
            code, _, err = cli("run", "worldsense:fresh", "--model", url, "--limit", 4,
                               "--reasks", reasks, "--runs-dir", tmp_path / runs, "--no-cache")
            assert code == 0, err
    one = read_records(_run_dir(tmp_path / "one") / "records.jsonl")
    two = read_records(_run_dir(tmp_path / "two") / "records.jsonl")
    assert all(r["resp"] == "" and len(replies_of(r)) == 2 for r in one)
    assert all(r["resp"] in r["expectedresp"] and len(replies_of(r)) == 3 for r in two)
