"""`--model human` at a real (pseudo-)terminal: a person types `n`, never brackets."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

from mindprobe.core.store import read_records


def test_human_plays_already_said_that_in_a_terminal(shared_data, tmp_path):
    data = shared_data("already_said_that")
    master, slave = pty.openpty()
    env = {**os.environ, "MINDPROBE_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "mindprobe.cli", "run", "already_said_that:distractorless",
         "--model", "human", "--n-samples", "1", "--max-turns", "3", "--data-dir", str(data),
         "--runs-dir", str(tmp_path)],
        stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
    )
    os.close(slave)
    os.write(master, b"n\nn\nn\n")
    out, err = proc.communicate(timeout=120)
    os.close(master)
    assert proc.returncode in (0, 1), err
    assert "MAIN TASK - " in err and "no brackets needed" in err
    rec = read_records(next(tmp_path.glob("already_said_that/distractorless/*/records.jsonl")))[0]
    assert rec["transcript"][0]["reply"] == "[answer: no]"
    assert not rec["violation_occurred"]


def test_human_needs_a_terminal(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "mindprobe.cli", "run", "worldsense:fresh", "--model", "human",
         "--runs-dir", str(tmp_path)], stdin=subprocess.DEVNULL, capture_output=True, text=True,
        env={**os.environ, "MINDPROBE_CACHE_DIR": str(tmp_path / "cache")}, timeout=120,
    )
    assert proc.returncode == 2 and "interactive terminal" in proc.stderr
