"""`--log-to` is checked before the run starts (one message, exit 2, nothing run), masks every
secret it could show or send, and keeps W&B's own capture of the process (the raw command line)
out of its offline files. Local SQLite stores, W&B offline mode and 127.0.0.1 only."""

from __future__ import annotations

import base64
import io
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from mindprobe.testing import TestServer
from mindprobe.testing.mlflow_server import free_port


def _ws(cli, runs: Path, *extra):
    return cli("run", "worldsense:fresh", "--model", "random", "--limit", 5, "--runs-dir",
               runs, *extra)


@pytest.mark.parametrize(("uri", "says"), [
    ("mlflow:gopher://example.org/x", "cannot track to a gopher: URI"),
    ("mlflow:sqlite:///{tmp}/missing/sub/m.db", "does not exist"),
    ("mlflow:sqlite:////proc/mindprobe-m.db", "is not writable"),
    ("mlflow:sqlite://", "in-memory"),
    ("mlflow:sqlite:///{tmp}", "is a folder"),
    ("mlflow:{tmp}/folder-store", "refuses a folder store"),
    ("mlflow:http://127.0.0.1:{port}", "does not answer"),
    ("mlflow:http://user:pw@127.0.0.1:{port}", "does not answer"),
    ("wandb:x", "no W&B login"),
    ("wandb:a/b", "not a W&B project name"),
])
def test_a_tracker_that_cannot_take_results_stops_the_run_before_it_starts(
        cli, tmp_path, monkeypatch, uri, says):
    """Was: accepted, the whole run made, then a warning (`gopher:`), folders created anywhere
    (SQLite), a user:pw@host URL taken as the host name, `wandb❌ not logged` (rich's emoji)."""
    for name in ("WANDB_MODE", "WANDB_API_KEY", "MLFLOW_TRACKING_URI", "MLFLOW_ALLOW_FILE_STORE"):
        monkeypatch.delenv(name, raising=False)
    uri = uri.format(tmp=tmp_path, port=free_port())
    code, _, err = _ws(cli, tmp_path / "runs", "--log-to", uri)
    err = " ".join(err.split())
    assert code == 2 and says in err, err
    assert err.count("error:") == 1 and "Traceback" not in err
    assert not (tmp_path / "runs").exists()  # nothing ran
    assert not (tmp_path / "missing").exists()  # no folder made for a mistyped store


def test_a_profile_checks_its_trackers_before_it_starts(cli, tmp_path):
    code, _, err = cli("profile", "--model", "random", "--size", "quick", "--runs-dir",
                       tmp_path / "runs", "--log-to", "mlflow:gopher://example.org/x")
    assert code == 2 and "cannot track to a gopher: URI" in " ".join(err.split())
    assert not (tmp_path / "runs").exists()


@pytest.mark.slow
def test_the_trackers_own_info_lines_show_with_v_only(cli, tmp_path, spawn):
    """MLflow's INFO lines (here: creating a new store's tables) printed with every run; `-v`
    in a real process (MLflow sets its level once, when imported)."""
    quiet = _ws(cli, tmp_path / "runs", "--log-to", f"mlflow:sqlite:///{tmp_path}/a.db")
    assert quiet[0] == 0 and "INFO" not in quiet[2], quiet[2]
    loud = spawn(["run", "worldsense:fresh", "--model", "random", "--limit", "5", "--runs-dir",
                  tmp_path / "runs", "--log-to", f"mlflow:sqlite:///{tmp_path}/b.db", "-v"])
    _, err = loud.communicate(timeout=300)
    assert loud.returncode == 0 and "INFO" in err, err


@pytest.mark.slow
def test_a_locked_sqlite_store_is_refused_within_seconds(cli, tmp_path):
    """Was: the run, then ~100 s of MLflow retrying the locked file before exiting."""
    import time

    store = tmp_path / "m.db"
    holder = sqlite3.connect(store)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        t0 = time.monotonic()
        code, _, err = _ws(cli, tmp_path / "runs", "--log-to", f"mlflow:sqlite:///{store}")
        assert code == 2 and "not writable" in err and "locked" in err, err
        assert time.monotonic() - t0 < 15
    finally:
        holder.rollback()
        holder.close()
    assert not (tmp_path / "runs").exists()


def test_a_token_in_a_tracker_url_is_never_printed(cli, tmp_path):
    """Was: the token of `?token=…` printed raw in the tracker warning; the re-log command
    had no `--to`, so following it logged to MLflow's default store instead."""
    from mindprobe.tracking import log_run, parse_target

    code, _, err = _ws(cli, tmp_path / "runs")
    assert code == 0, err
    run_dir = next((tmp_path / "runs").glob("worldsense/*/*"))
    port = free_port()
    uri = f"http://127.0.0.1:{port}/?token=TrackerTokenCanary1"
    code, _, err = cli("export", "--format", "mlflow", "--run", run_dir, "--to", uri)
    assert code == 2 and "does not answer" in err and "TrackerTokenCanary1" not in err
    said: list[str] = []  # a tracker that goes down after the check: the warning
    assert log_run(run_dir, [parse_target(f"mlflow:{uri}")], said.append) == []
    (line,) = said
    assert "TrackerTokenCanary1" not in line and "not logged" in line
    assert f"--run {run_dir} --to http://127.0.0.1:{port}/?token=***" in line


def test_rows_are_named_by_their_keys_alone():
    """A row's metrics are named by what the row is: declared keys (numbers too), else the
    leading text columns; a text column further right (the interval method) names nothing;
    percent columns are sent in percent; an empty cell is NaN, not a missing name."""
    import math

    import pandas as pd

    from mindprobe.core.results import Table
    from mindprobe.tracking.content import table_metrics

    frame = pd.DataFrame([{"problem": "ALL", "acc": 0.5, "lo": None, "ci": "Wilson"},
                          {"problem": "Infer", "acc": 0.25, "lo": 0.1, "ci": "upstream"}])
    got = table_metrics("b", "t", Table(frame, percent=("acc", "lo"), index=False))
    assert set(got) == {"b/t/acc/ALL", "b/t/lo/ALL", "b/t/acc/Infer", "b/t/lo/Infer"}
    assert got["b/t/acc/ALL"] == 50.0 and math.isnan(got["b/t/lo/ALL"])
    cells = pd.DataFrame([{"excerpt": 250, "segment": 20, "n": 3, "model": "m"},
                          {"excerpt": 250, "segment": 50, "n": 4, "model": "m"}])
    got = table_metrics("b", "name/with/model", Table(cells, index=False, tracked_as="cells",
                                                      keys=("excerpt", "segment")))
    assert got == {"b/cells/n/250.20": 3.0, "b/cells/n/250.50": 4.0}


def test_a_warning_is_text_not_markup():
    """Was: `wandb:x: not logged` printed as `wandb❌ not logged` (a rich emoji code)."""
    from mindprobe.engine.settings import Reporter

    out = io.StringIO()
    Reporter(Console(file=out, width=200)).warn("wandb:x: not logged [bold]x[/bold]")
    assert out.getvalue().strip() == "warning: wandb:x: not logged [bold]x[/bold]"


@pytest.mark.slow
def test_wandb_offline_files_hold_no_secret(tmp_path):
    """Was: W&B's metadata held the raw command line: the model URL's password and api_key
    (uploaded by `wandb sync`). A real process, so W&B sees a real `sys.argv`; the MLflow
    store and its artifacts, logged in the same run, hold none either."""
    pytest.importorskip("wandb", reason="needs mindprobe[wandb] (installed by .[dev])")
    secrets = ["WandbUserinfoPass1", "WandbApiKeyQuery2", "WandbAccessToken3"]
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_DIR": str(tmp_path / "wandb"),
           "WANDB_SILENT": "true", "MINDPROBE_CACHE_DIR": str(tmp_path / "cache")}
    (tmp_path / "wandb").mkdir()
    (tmp_path / "mlflow").mkdir()
    with TestServer(reply="TRUE") as srv:
        host = srv.base_url.split("://")[1]
        model = (f"openai:test-model@http://alice:{secrets[0]}@{host}?api_key={secrets[1]}"
                 f"&access_token={secrets[2]}")
        done = subprocess.run(
            [sys.executable, "-m", "mindprobe.cli", "run", "worldsense:fresh", "--model", model,
             "--limit", "3", "--runs-dir", str(tmp_path / "runs"), "--log-to", "wandb:leaks",
             "--log-to", f"mlflow:sqlite:///{tmp_path}/mlflow/m.db"],
            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    files = [p for d in ("wandb", "mlflow") for p in (tmp_path / d).rglob("*") if p.is_file()]
    assert any(p.suffix == ".wandb" for p in files) and any(p.name == "m.db" for p in files)
    assert any(p.name == "records.jsonl" for p in files)  # the MLflow artifacts, beside it
    forms = [f for s in secrets for f in (s.encode(), base64.b64encode(s.encode()))]
    leaks = [str(p) for p in files if any(f in p.read_bytes() for f in forms)]
    assert leaks == []
    assert not any(s in done.stderr + done.stdout for s in secrets)


@pytest.mark.slow
def test_wandb_files_go_beside_the_run_not_the_working_folder(tmp_path):
    """Was: W&B wrote its offline run into ./wandb of whatever folder the command ran from.
    Without WANDB_DIR it goes into the logged run's folder; the working folder stays empty."""
    pytest.importorskip("wandb", reason="needs mindprobe[wandb] (installed by .[dev])")
    env = {k: v for k, v in os.environ.items() if k != "WANDB_DIR"}
    env.update({"WANDB_MODE": "offline", "WANDB_SILENT": "true",
                "MINDPROBE_CACHE_DIR": str(tmp_path / "cache")})
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "mindprobe.cli", "run", "worldsense:fresh", "--model", "random",
         "--limit", "3", "--runs-dir", str(tmp_path / "runs"), "--log-to", "wandb:here"],
        env=env, cwd=work, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert list(work.iterdir()) == []
    (manifest,) = (tmp_path / "runs").rglob("manifest.json")
    assert list((manifest.parent / "wandb").glob("offline-run-*"))


@pytest.mark.slow
@pytest.mark.parametrize(("task", "extra"), [
    ("worldsense:fresh", ["--limit", "40"]),
    ("mr_gsm8k:sample", ["--data-dir", "mr_gsm8k"]),
    ("already_said_that:which-is-heavier", ["--limit", "5", "--data-dir", "already_said_that"]),
])
def test_every_row_of_every_table_has_its_own_name(cli, tmp_path, shared_data, task, extra):
    """Each benchmark's tables name their rows by keys that tell every row apart (never by
    position, which moves when a row appears or goes). SORT's (lengths, bins, books) are
    declared in its report; a SORT run takes minutes here, so it is not among these."""
    from mindprobe.core.results import table_json
    from mindprobe.core.store import load_run
    from mindprobe.tracking.content import row_keys

    extra = [str(shared_data(e)) if e in ("mr_gsm8k", "already_said_that") else e for e in extra]
    code, _, err = cli("run", task, "--model", "random", "--runs-dir", tmp_path, *extra)
    assert code == 0, err
    (manifest,) = tmp_path.rglob("manifest.json")
    res = load_run(manifest.parent).results()
    assert res.tables
    for name, table in res.tables.items():
        rows = table_json(table)
        keys = row_keys(table, rows)
        labels = {".".join(str(r[c]) for c in keys if r.get(c) is not None) for r in rows}
        assert len(rows) == 1 or (keys and len(labels) == len(rows)), (name, keys)
