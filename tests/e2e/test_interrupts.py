"""Issue 22, observation 7: Ctrl-C / SIGTERM end a run cleanly at any moment, model start-up
included: the resume line, the manifest `interrupted` (never left `running`), exit 130 after
Ctrl-C and 143 after SIGTERM (128 + the signal, issue 33.8)."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from mindprobe.testing import TestServer
from mindprobe.testing.responders import worldsense_answer


def _interrupt(proc, sig, *, after_line: str | None = None, when=None) -> str:
    """Send `sig` once stderr shows `after_line` (or `when()` holds); return all stderr."""
    seen = []
    if after_line is not None:
        while True:
            line = proc.stderr.readline()
            seen.append(line)
            if after_line in line or not line:
                break
    else:
        deadline = time.time() + 60
        while not when() and time.time() < deadline:
            time.sleep(0.02)
    proc.send_signal(sig)
    try:
        _, rest = proc.communicate(timeout=120)
    except BaseException:
        proc.kill()  # a hang fails the test, and leaves no process behind
        proc.communicate()
        raise
    return "".join(seen) + rest


def _manifests(runs: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in runs.rglob("manifest.json")]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.slow
def test_interrupt_while_the_embedded_model_starts(spawn, tmp_path, sig):
    pytest.importorskip("xllamacpp")
    runs = tmp_path / "runs"
    proc = spawn(["run", "worldsense:fresh", "--model", "local", "--runs-dir", runs,
                  "--limit", 20, "--no-cache"])
    err = _interrupt(proc, sig, after_line="starting the embedded llama.cpp server")
    assert proc.returncode == 128 + sig, err
    assert "Interrupted" in err and "Resume with: mindprobe run worldsense:fresh" in err, err
    assert "Traceback" not in err
    assert all(m["status"] == "interrupted" for m in _manifests(runs))


def test_interrupt_after_the_run_opened_before_any_record(spawn, tmp_path):
    runs = tmp_path / "runs"
    with TestServer(responder=worldsense_answer, latency=30) as srv:
        proc = spawn(["run", "worldsense:fresh", "--model", f"openai:test-model@{srv.base_url}",
                      "--runs-dir", runs, "--limit", 10, "--no-cache"])
        err = _interrupt(proc, signal.SIGINT, when=lambda: any(runs.rglob("manifest.json")))
    assert proc.returncode == 130 and "Resume with:" in err, err
    assert [m["status"] for m in _manifests(runs)] == ["interrupted"]


@pytest.mark.parametrize("delay", [1.0, 2.0, 3.0])
@pytest.mark.slow
def test_sigterm_at_any_moment_of_the_start(spawn, tmp_path, delay):
    """Loading data, asking the server who it is, opening the run: wherever the signal lands,
    the program ends as an interrupted run, never killed silently. (Not before the interpreter
    has loaded mindprobe's entry point: until then no handler of ours exists.)"""
    runs = tmp_path / "runs"
    with TestServer(responder=worldsense_answer, latency=30) as srv:
        proc = spawn(["run", "worldsense:fresh", "--model", f"openai:test-model@{srv.base_url}",
                      "--runs-dir", runs, "--limit", 10, "--no-cache"])
        time.sleep(delay)
        err = _interrupt(proc, signal.SIGTERM, when=lambda: True)
    assert proc.returncode == 143, err
    assert "nterrupted" in err and "Traceback" not in err, err
    assert all(m["status"] == "interrupted" for m in _manifests(runs))
