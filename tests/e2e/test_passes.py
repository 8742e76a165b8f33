"""One runner for every pass: the judge pass resumes after kill -9 like a run, a run directory
has one writer at a time, duplicated records are repaired, items have a time limit."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from pathlib import Path

import pytest
from rich.console import Console

from mindprobe.benchmarks.mr_gsm8k import templates
from mindprobe.benchmarks.mr_gsm8k.prompts import braced
from mindprobe.core.plan import Item
from mindprobe.core.runner import PassSettings, execute
from mindprobe.core.store import RunStore, base_manifest, read_records
from mindprobe.models.random import RandomModel
from mindprobe.testing import TestServer

N = 120


def _mr_run(run_dir: Path, shared: Path) -> None:
    """A finished MR-GSM8K run whose N records are all step hits waiting for a judge."""
    run_dir.mkdir(parents=True)
    manifest = base_manifest(benchmark="mr_gsm8k", variant="sample", prompting="0shot",
                             model={"model": "random"}, model_label="random",
                             config={"seed": 0, "shots": 0, "max_tokens": 64, "temperature": 0.0,
                                     "question_types": None, "judge": None,
                                     "judge_label": None, "templates": braced(templates(shared))},
                             data={}, n_items=N, status="finished")
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    with open(run_dir / "records.jsonl", "w") as f:
        for i in range(N):
            f.write(json.dumps({
                "id": f"u{i}", "uuid": f"u{i}", "question_type": "original", "label": "wrong",
                "label_step": 1, "t1_hit": True, "t2_hit": True, "outcome": "tn",
                "judgement": "wrong", "error_text": f"step 1 adds {i}",
                "judge_input": {"question": f"q{i}", "model_output_steps": ["a", "b"],
                                "model_output_solution_first_error_step": 1,
                                "model_output_solution_first_error_reason": "adds"},
            }) + "\n")


def _wait_lines(path: Path, n: int, timeout: float = 60) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= n:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.slow
def test_judge_pass_resumes_after_kill9(spawn, cli, tmp_path, shared_data):
    run_dir = tmp_path / "run"
    _mr_run(run_dir, shared_data("mr_gsm8k"))
    verdicts = run_dir / "judgements" / "j1.jsonl"
    reply = "Final Decision: Correct"
    with TestServer(reply=reply, latency=0.03, models=["judge-a"]) as srv:
        args = ["judge", "mr_gsm8k", "--run", run_dir, "--judge",
                f"openai:judge-a@{srv.base_url}", "--judge-label", "j1", "--concurrency", 2,
                "--no-cache"]
        proc = spawn(args)
        assert _wait_lines(verdicts, 20), proc.stderr.read() if proc.poll() is not None else ""
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        with open(verdicts, "ab") as f:
            f.write(b'{"id": "u9')  # torn by the kill
        before = {r["id"] for r in read_records(verdicts)}
        assert 20 <= len(before) < N
        srv.reset_stats()
        code, doc, err = cli(*args, "--json")
        assert code == 0, err
        asked = srv.stats()["requests"]["/v1/chat/completions"]
    ids = [r["id"] for r in read_records(verdicts)]
    assert sorted(ids) == sorted(f"u{i}" for i in range(N))  # each once
    assert asked == N - len(before)  # nothing judged twice
    assert doc["judges"]["j1"]["n_verdicts"] == N and doc["t3"] == "graded"


@pytest.mark.slow
def test_second_process_on_a_run_dir_is_refused(spawn, cli, tmp_path):
    runs = tmp_path / "runs"
    with TestServer(reply="TRUE", latency=0.05) as srv:
        args = ["run", "worldsense:fresh", "--model", f"openai:test-model@{srv.base_url}",
                "--runs-dir", runs, "--concurrency", 1, "--no-cache", "--limit", 120]
        proc = spawn(args)
        found = None
        deadline = time.time() + 60
        while time.time() < deadline and found is None:
            hits = list(runs.glob("worldsense/fresh/*/records.jsonl"))
            found = hits[0] if hits and hits[0].stat().st_size else None
            time.sleep(0.05)
        assert found is not None
        code, _, err = cli(*args)
        assert code == 2 and "in use by another mindprobe process" in err
        assert f"pid {proc.pid}" in err and len(err.strip().splitlines()) == 1
        code, out, err = cli("runs", "--runs-dir", runs, "--json")
        assert out[0]["status"] == "running"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        # The killed run is no longer shown as running, and its lock is taken over.
        code, out, err = cli("runs", "--runs-dir", runs, "--json")
        assert out[0]["status"] == "interrupted"
        code, doc, err = cli(*args, "--json")
    assert code == 0, err
    ids = [r["id"] for r in read_records(found)]
    assert len(ids) == len(set(ids)) == doc["n_trials"]


def test_duplicated_records_are_repaired_not_blamed_on_data(cli, tmp_path):
    runs = tmp_path / "runs"
    code, doc, err = cli("run", "worldsense:fresh", "--model", "random", "--runs-dir", runs,
                         "--limit", 40, "--json")
    assert code == 0, err
    path = next(runs.glob("worldsense/fresh/*/records.jsonl"))
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines + lines[:10]))  # what two writers used to leave
    code, again, err = cli("analyse", "worldsense", "--run", path.parent, "--json")
    assert code == 0 and "duplicated record" in err and "re-fetch" not in err
    assert again["tables"] == doc["tables"] and again["headline"] == doc["headline"]
    code, _, err = cli("run", "worldsense:fresh", "--model", "random", "--runs-dir", runs,
                       "--limit", 40)
    assert code == 0 and "repaired" in err
    assert len(read_records(path)) == len(lines)


def test_item_time_limit_records_an_error(tmp_path):
    async def play(item: Item, session) -> dict:
        await asyncio.sleep(0.5 if item.id == "slow" else 0)
        return {"ok": True}

    store = RunStore(tmp_path / "r")
    store.open(base_manifest(benchmark="b", variant="v", model={}, config={}, data={}))
    settings = PassSettings(concurrency=2, item_time_limit=0.1)
    result = asyncio.run(execute([Item("fast", None), Item("slow", None)], play,
                                 {"model": RandomModel()}, store, {}, settings,
                                 console=Console(quiet=True), description="t"))
    store.close("finished")
    by_id = {r["id"]: r for r in result.records}
    assert by_id["fast"]["ok"] and "time limit of 0.1 s" in by_id["slow"]["error"]


def test_judge_pass_on_a_full_disk_stops_cleanly(cli, tmp_path, shared_data, tmpfs):
    """Issue 33.3: the judge's verdicts fill the disk: one message, exit 2, its manifest
    `interrupted`, no temporary file; with room again it resumes and judges each item once."""
    disk = tmpfs("runs", 160)
    run_dir = disk / "run"
    _mr_run(run_dir, shared_data("mr_gsm8k"))
    verdicts = run_dir / "judgements" / "j1.jsonl"
    reply = "Final Decision: Correct. " + "Because. " * 200  # ~2 KB a verdict: no room for all
    with TestServer(reply=reply, models=["judge-a"]) as srv:
        args = ["judge", "mr_gsm8k", "--run", run_dir, "--judge",
                f"openai:judge-a@{srv.base_url}", "--judge-label", "j1", "--no-cache"]
        code, _, err = cli(*args)
        assert code == 2 and "Traceback" not in err, err
        assert "no space left on the disk holding" in err and "MB free" in err, err
        assert not [p for p in disk.rglob("*") if p.name.endswith(".tmp")]
        statuses = [json.loads(p.read_text())["status"] for p in run_dir.rglob("*.json")
                    if p.name != "manifest.json"]
        assert statuses == ["interrupted"], statuses
        before = len(read_records(verdicts))
        assert 0 < before < N
        tmpfs("runs", 4096)
        code, _, err = cli(*args)
        assert code == 0, err
    assert sorted(r["id"] for r in read_records(verdicts)) == sorted(f"u{i}" for i in range(N))
