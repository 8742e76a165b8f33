"""Replicas of the embedded model on Ray: a local Ray instance (2 CPUs) with two llama.cpp
replicas runs a small benchmark to the end, both serve, and nothing is left running afterwards
(also after Ctrl-C). Without Ray: one message naming the extra."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mindprobe.cli import main
from mindprobe.core.store import read_records
from mindprobe.errors import ModelError
from mindprobe.models import parse_model_spec
from mindprobe.models.ray_replicas import import_ray
from mindprobe.models.router import RouterModel

HAVE_RAY = importlib.util.find_spec("ray") is not None
needs_ray = pytest.mark.skipif(not HAVE_RAY, reason="ray is not installed "
                               "(pip install 'mindprobe[ray]')")
RAY_PROCESS_MARKS = ("raylet", "gcs_server", "ray::", "default_worker.py", "LlamaReplica",
                     "dashboard", "log_monitor")


def _ray_processes() -> set[int]:
    """PIDs of Ray's processes (head, raylet, workers, actors) on this machine."""
    found = set()
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if any(m in cmd for m in RAY_PROCESS_MARKS):
            found.add(int(d.name))
    return found


def _left_running(before: set[int], timeout: float = 20.0) -> set[int]:
    deadline = time.time() + timeout
    while time.time() < deadline:
        left = _ray_processes() - before
        if not left:
            return left
        time.sleep(0.2)
    return _ray_processes() - before


def _spawn(tmp_path: Path, args: list) -> subprocess.Popen:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "mindprobe.cli", *map(str, args)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_without_ray_one_message_names_the_extra(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    with pytest.raises(ModelError, match=r"pip install 'mindprobe\[ray\]'"):
        import_ray()
    code = main(["run", "worldsense:fresh", "--model", "local", "--replicas", "2", "--ray",
                 "--limit", "2", "--runs-dir", str(tmp_path / "runs")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("error:") == 1 and "mindprobe[ray]" in err
    assert "Traceback" not in err and not (tmp_path / "runs").exists()


@pytest.mark.parametrize(("flags", "words"), [
    (["--model", "local", "--replicas", "2"], "add --ray"),
    (["--model", "local", "--ray"], "--ray needs --replicas"),
    (["--model", "openai:m@http://127.0.0.1:9/v1", "--replicas", "2", "--ray"],
     "local GGUF"),
    (["--model", "openai:m", "--endpoints", "x.txt", "--ray"], "one or the other"),
    (["--model", "local", "--replicas", "0", "--ray"], "must be between 1 and"),
])
def test_replica_flags_are_checked(flags, words, tmp_path, capsys):
    code = main(["run", "worldsense:fresh", *flags, "--runs-dir", str(tmp_path / "runs")])
    err = capsys.readouterr().err
    assert code == 2 and words in err, err


def test_replica_router_has_the_identity_of_the_embedded_engine():
    model = parse_model_spec("local", replicas=3, ray_address="")
    assert isinstance(model, RouterModel)
    assert model.label == "gemma-3-270m-q4_k_m" and model.spec == "local"
    assert model.default_concurrency == 3  # one slot per replica, as `local` has one
    assert set(model.identity()) == {"engine", "gguf_sha256", "model"}
    assert model.can("tokenize") and model.can("grammar") and model.can("logprobs")
    assert len(model.endpoint_stats()) == 3  # placeholders, nothing started


@needs_ray
@pytest.mark.slow
def test_two_replicas_on_a_local_ray_instance_run_to_the_end(tmp_path):
    before = _ray_processes()
    runs = tmp_path / "runs"
    proc = _spawn(tmp_path, ["run", "worldsense:fresh", "--limit", 10, "--model", "local",
                             "--replicas", 2, "--ray", "--runs-dir", runs, "--no-cache",
                             "--json"])
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    doc = json.loads(out)
    eps = doc["endpoints"]
    assert len(eps) == 2 and all(e["ok"] > 0 and e["errors"] == 0 for e in eps), eps
    assert all(e["endpoint"].startswith("http://127.0.0.1:") for e in eps)
    records = read_records(next(runs.glob("worldsense/fresh/*/records.jsonl")))
    manifest = json.loads(next(runs.glob("worldsense/fresh/*/manifest.json")).read_text())
    # --limit takes whole tuples, as many from each cell: at least 10 trials, all recorded
    assert len(records) == manifest["n_items"] >= 10
    assert not any("error" in r for r in records)
    assert manifest["model_identity"]["model"]["engine"] == "llama.cpp"
    assert not _left_running(before), "Ray or replica processes left running"


@needs_ray
@pytest.mark.slow
def test_ctrl_c_stops_the_replicas(tmp_path):
    before = _ray_processes()
    runs = tmp_path / "runs"
    proc = _spawn(tmp_path, ["run", "worldsense:fresh", "--limit", 200, "--model", "local",
                             "--replicas", 2, "--ray", "--runs-dir", runs, "--no-cache"])
    deadline = time.time() + 240
    while time.time() < deadline and proc.poll() is None:
        hits = list(runs.glob("worldsense/fresh/*/records.jsonl"))
        if hits and hits[0].read_bytes().count(b"\n") >= 2:
            break
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Resume with:" in err and "Traceback" not in err
    assert not _left_running(before), "Ray or replica processes left running after Ctrl-C"
