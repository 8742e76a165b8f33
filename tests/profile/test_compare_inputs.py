"""Issue 41 (items 10, 13, 16): `profile --compare` reads profile.json as outside input. A run
path outside the profile, a profile that is a JSON list or holds a non-object benchmark, an
`--out` whose folder is missing and `--model` beside `--compare` are one message each (exit 2)
before anything is printed; B − A over too few shared items says so instead of "-0.0 [-0.0,
-0.0]"; a profile stopped by SIGTERM prints its resume line as a run does."""

from __future__ import annotations

import json
import shutil
import signal
import time
from pathlib import Path

import pytest

from mindprobe.testing import TestServer
from mindprobe.testing.responders import worldsense_answer


def _profile(cli, folder: Path, label: str = "random") -> Path:
    """A profile folder as `mindprobe profile` leaves it, with one WorldSense run (cheap)."""
    folder.mkdir(parents=True)
    code, _, err = cli("run", "worldsense:fresh", "--model", "random", "--limit", 60,
                       "--runs-dir", folder / "runs")
    assert code == 0, err
    run = next((folder / "runs").rglob("manifest.json")).parent
    _write(folder, {"size": "quick", "model_label": label, "benchmarks": {
        "worldsense": {"status": "finished", "runs": [str(run.relative_to(folder))]}}})
    return folder


def _write(folder: Path, doc: object) -> None:
    (folder / "profile.json").write_text(json.dumps(doc))


@pytest.fixture
def two(cli, tmp_path) -> tuple[Path, Path]:
    a = _profile(cli, tmp_path / "a")
    b = tmp_path / "b"
    shutil.copytree(a, b)
    return a, b


def test_a_run_path_outside_the_profile_is_refused(cli, two, tmp_path):
    a, b = two
    outside = _profile(cli, tmp_path / "elsewhere", "other")
    run = next((outside / "runs").rglob("manifest.json")).parent
    for rel in (f"../elsewhere/{run.relative_to(outside)}", str(run)):
        _write(b, {"size": "quick", "model_label": "random",
                   "benchmarks": {"worldsense": {"runs": [rel]}}})
        code, out, err = cli("profile", "--compare", a, b)
        assert code == 2 and "points outside" in err and rel in err, err
        assert "leaderboard" not in out  # nothing printed from the other profile


@pytest.mark.parametrize("doc, words", [
    ([1, 2], "not a profile"),
    ({"size": "quick", "benchmarks": {"worldsense": 3}}, "benchmarks.worldsense is not an object"),
    ({"size": "quick", "benchmarks": []}, "'benchmarks' is not an object"),
    ({"size": "quick", "benchmarks": {"worldsense": {"runs": "runs/x"}}}, "runs is not a list"),
])
def test_a_profile_of_the_wrong_shape_is_one_message(cli, two, doc, words):
    a, b = two
    _write(b, doc)
    code, _, err = cli("profile", "--compare", a, b)
    assert code == 2 and words in err and "profile.json" in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 3, err


def test_out_and_model_are_checked_before_the_comparison_prints(cli, two, tmp_path):
    a, b = two
    code, out, err = cli("profile", "--compare", a, b, "--out", "/nonexistent/dir/board.csv")
    assert code == 2 and "/nonexistent/dir" in err and "does not exist" in err, err
    assert out == ""  # refused before the leaderboard or B − A printed
    code, out, err = cli("profile", "--compare", a, b, "--out", tmp_path / "board.txt")
    assert code == 2 and ".csv or .json" in err and out == "", err
    code, out, err = cli("profile", "--compare", a, b, "--model", "random")
    assert code == 2 and "--model" in err and "--compare" in err and out == "", err
    code, out, err = cli("profile", "--compare", a, b, "--out", tmp_path / "board.csv")
    assert code == 0 and (tmp_path / "board.csv").is_file(), err


def test_too_little_overlap_is_said_not_a_zero_interval(cli, two):
    a, b = two
    code, doc, err = cli("profile", "--compare", a, b, "--json")
    assert code == 0, err
    (row,) = doc["rows"]
    assert row["n"] == 60 and row["difference"] == 0.0 and row["ci_low"] is not None
    records = next((b / "runs").rglob("records.jsonl"))
    records.write_text("".join(records.read_text().splitlines(keepends=True)[:3]))
    code, doc, err = cli("profile", "--compare", a, b, "--json")
    assert code == 0, err
    (row,) = doc["rows"]
    assert row["n"] == 3 and row["difference"] is None and row["ci_low"] is None
    assert "too little overlap" in row["note"]
    code, out, err = cli("profile", "--compare", a, b)
    text = " ".join(out.split())
    assert "too little overlap" in text and "-0.0" not in text, out


@pytest.mark.slow
def test_a_sigterm_profile_prints_its_resume_line(spawn, tmp_path, shared_data):
    root = tmp_path / "data"  # only Already Said That's data: the other benchmarks are skipped
    root.mkdir()
    (root / "already_said_that").symlink_to(shared_data("already_said_that"))
    runs = tmp_path / "runs"
    with TestServer(responder=worldsense_answer, latency=30) as srv:
        proc = spawn(["profile", "--model", f"openai:test-model@{srv.base_url}", "--runs-dir",
                      runs, "--data-dir", root, "--no-cache"])
        deadline = time.time() + 120
        while not any(runs.rglob("records.jsonl")) and not any(
                m.parent.name != runs.name for m in runs.rglob("manifest.json")):
            assert proc.poll() is None and time.time() < deadline, proc.stderr.read()
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "Interrupted" in err and "Resume with:" in err and "mindprobe profile" in err, err
    assert "Traceback" not in err and "nothing was recorded" not in err
    states = [json.loads(p.read_text())["status"] for p in runs.rglob("runs/**/manifest.json")]
    assert states and all(s == "interrupted" for s in states), states
