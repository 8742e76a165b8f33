"""Results where teams track them: a real MLflow tracking server on 127.0.0.1 (sqlite backend,
a temporary artifact folder) read back with MLflow's own client; W&B in offline mode read back
from its files; Parquet and Hugging Face exports read back and compared with the records; a
leaderboard of several profiles. Nothing reaches the internet."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mindprobe.core.store import read_records

mlflow = pytest.importorskip("mlflow", reason="needs mindprobe[mlflow] (installed by .[dev])")


@pytest.fixture(scope="module")
def mlflow_server(tmp_path_factory):
    """`mlflow server` on 127.0.0.1 with a sqlite store and a local artifact folder."""
    from mindprobe.testing.mlflow_server import mlflow_server as serve

    with serve(tmp_path_factory.mktemp("mlflow")) as uri:
        yield uri


def _ws(cli, runs: Path, limit: int, *extra) -> tuple[int, dict, str]:
    return cli("run", "worldsense:fresh", "--model", "random", "--limit", limit, "--runs-dir",
               runs, "--json", *extra)


@pytest.mark.slow
def test_a_run_and_its_resume_are_one_mlflow_run(cli, tmp_path, mlflow_server):
    from mlflow import MlflowClient

    runs = tmp_path / "runs"
    code, doc, err = _ws(cli, runs, 40, "--log-to", f"mlflow:{mlflow_server}")
    assert code == 0 and "not logged" not in err, err
    run_dir = next(runs.glob("worldsense/*/*"))
    manifest = json.loads((run_dir / "manifest.json").read_text())
    run_id = manifest["trackers"][f"mlflow:{mlflow_server}"]
    client = MlflowClient(tracking_uri=mlflow_server)
    got = client.get_run(run_id)
    params = got.data.params
    assert params["benchmark"] == "worldsense" and params["variant"] == "fresh"
    assert params["model.model"] == "random" and params["seed"] == str(
        manifest["config"]["seed"])
    assert params["mindprobe_version"] == manifest["mindprobe_version"]
    metrics = got.data.metrics
    head = doc["headline"]
    assert metrics[f"worldsense/headline/{head['name']}"] == pytest.approx(100 * head["value"])
    assert metrics[f"worldsense/headline/{head['name']}/ci_low"] == pytest.approx(
        100 * head["ci_low"])
    assert metrics["worldsense/items_done"] == len(read_records(run_dir / "records.jsonl"))
    assert len([k for k in metrics if k.startswith("worldsense/")]) > 10  # the tables too
    names = {a.path for a in client.list_artifacts(run_id)}
    assert {"records.jsonl", "manifest.json", "report.html"} <= names
    # resume with more items: the same MLflow run, its metrics updated, no second run
    code, doc2, err = _ws(cli, runs, 80, "--log-to", f"mlflow:{mlflow_server}")
    assert code == 0, err
    manifest2 = json.loads((run_dir / "manifest.json").read_text())
    assert manifest2["trackers"][f"mlflow:{mlflow_server}"] == run_id
    assert client.get_run(run_id).data.metrics["worldsense/items_done"] == len(
        read_records(run_dir / "records.jsonl")) > metrics["worldsense/items_done"]
    # the same names, every one at its current value: nothing stale from the 40-item logging
    from mindprobe.core.store import load_run
    from mindprobe.tracking.content import metrics_of

    now = client.get_run(run_id).data.metrics
    current = metrics_of("worldsense", load_run(run_dir).results())
    assert set(now) == set(metrics) == {*current, "worldsense/items_done"}
    assert {k: now[k] for k in current} == pytest.approx(current, nan_ok=True)
    assert now[f"worldsense/headline/{head['name']}"] == pytest.approx(
        100 * doc2["headline"]["value"])  # shares in percent, as the tables
    exp = client.get_experiment_by_name("mindprobe")
    assert len(client.search_runs([exp.experiment_id])) == 1
    # the export command logs a finished run the same way (again the same run)
    code, _, err = cli("export", "--format", "mlflow", "--run", run_dir, "--to", mlflow_server)
    assert code == 0, err
    assert len(client.search_runs([exp.experiment_id])) == 1


@pytest.mark.slow
def test_a_profile_is_a_parent_run_with_nested_runs(cli, tmp_path, mlflow_server,
                                                   shared_data, monkeypatch):
    from mlflow import MlflowClient

    root = shared_data("worldsense").parent
    monkeypatch.setenv("MLFLOW_EXPERIMENT_NAME", "profiles")
    sample = root / "mr_gsm8k" / "sample_records.jsonl"
    code, doc, err = cli("profile", "--model", "random", "--size", "quick", "--data-dir", root,
                         "-O", f"mr_gsm8k.data_file={sample}", "--runs-dir", tmp_path / "runs",
                         "--log-to", f"mlflow:{mlflow_server}", "--json")
    assert code in (0, 1), err
    folder = Path(doc["profile"])
    parent = json.loads((folder / "profile.json").read_text())["trackers"][
        f"mlflow:{mlflow_server}"]
    client = MlflowClient(tracking_uri=mlflow_server)
    exp = client.get_experiment_by_name("profiles")
    children = client.search_runs([exp.experiment_id],
                                  f"tags.mlflow.parentRunId = '{parent}'")
    ran = {r["benchmark"] for r in doc["results"]}
    assert {c.data.params["benchmark"] for c in children} == ran
    top = client.get_run(parent)
    assert top.data.params["size"] == "quick"
    for r in doc["results"]:
        key = f"{r['benchmark']}/headline/{r['metric']}"
        assert any(k.startswith(key.split("/headline/")[0] + "/headline/")
                   for k in top.data.metrics), key
    assert "report.html" in {a.path for a in client.list_artifacts(parent)}


def test_a_tracker_that_is_down_stops_nothing_it_cannot_log(cli, tmp_path):
    """Down before the run: refused up front (exit 2, nothing run); down afterwards (the
    export): exit 2 with the reason, the run untouched."""
    from mindprobe.testing.mlflow_server import free_port

    port = free_port()  # nobody listens there
    code, doc, err = _ws(cli, tmp_path / "runs", 20, "--log-to", f"mlflow:http://127.0.0.1:{port}")
    err = " ".join(err.split())  # the message wraps at the console's width
    assert code == 2 and "does not answer" in err and "mindprobe export --format mlflow" in err
    assert not (tmp_path / "runs").exists()
    code, doc, err = _ws(cli, tmp_path / "runs", 20)
    run_dir = next((tmp_path / "runs").glob("worldsense/*/*"))
    code, _, err = cli("export", "--format", "mlflow", "--run", run_dir, "--to",
                       f"http://127.0.0.1:{port}")
    assert code == 2 and "does not answer" in err
    assert len(read_records(run_dir / "records.jsonl")) == 20


def test_unknown_tracker_is_a_usage_error(cli, tmp_path):
    code, _, err = _ws(cli, tmp_path / "runs", 5, "--log-to", "tensorboard")
    assert code == 2 and "mlflow[:TRACKING_URI] or wandb[:PROJECT]" in err
    assert not (tmp_path / "runs").exists()


def _wandb_records(path: Path) -> list:
    """The records of an offline W&B run file, parsed with W&B's own protobuf definitions.
    wandb 0.31 ships no Python reader of its `.wandb` files any more; the file is a LevelDB-
    style log (a 7-byte `:W&B` header, 32 KiB blocks of checksum/length/type chunks)."""
    import struct

    from wandb.proto import wandb_internal_pb2 as pb

    data = path.read_bytes()
    assert data[:4] == b":W&B"
    pos, block, buf, raw = 7, 32768, b"", []
    while pos + 7 <= len(data):
        left = block - pos % block
        _crc, length, kind = struct.unpack("<IHB", data[pos:pos + 7])
        if left < 7 or (kind == 0 and length == 0):
            pos += left
            continue
        chunk = data[pos + 7:pos + 7 + length]
        pos += 7 + length
        if kind == 1:
            raw.append(chunk)
        elif kind in (2, 3):
            buf = chunk if kind == 2 else buf + chunk
        elif kind == 4:
            raw.append(buf + chunk)
    out = []
    for r in raw:
        rec = pb.Record()
        rec.ParseFromString(r)
        out.append(rec)
    return out


def _wandb_items(records: list, kind: str) -> dict:
    items = {}
    for rec in records:
        if rec.WhichOneof("record_type") == kind:
            for it in getattr(rec, kind).update:
                items[it.key or "/".join(it.nested_key)] = json.loads(it.value_json)
    return items


@pytest.mark.slow
def test_wandb_offline_files_hold_config_and_summary(cli, tmp_path, monkeypatch):
    pytest.importorskip("wandb", reason="needs mindprobe[wandb] (installed by .[dev])")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path / "wandb"))
    monkeypatch.setenv("WANDB_SILENT", "true")
    (tmp_path / "wandb").mkdir()
    runs = tmp_path / "runs"
    code, doc, err = _ws(cli, runs, 30, "--log-to", "wandb:mindprobe-test")
    assert code == 0, err
    run_dir = next(runs.glob("worldsense/*/*"))
    run_id = json.loads((run_dir / "manifest.json").read_text())["trackers"][
        "wandb:mindprobe-test"]
    code, doc2, err = _ws(cli, runs, 60, "--log-to", "wandb:mindprobe-test")
    assert code == 0, err
    assert json.loads((run_dir / "manifest.json").read_text())["trackers"][
        "wandb:mindprobe-test"] == run_id
    offline = sorted((tmp_path / "wandb" / "wandb").glob(f"offline-run-*-{run_id}"))
    assert len(offline) == 2  # both loggings went to the one W&B run id
    records = _wandb_records(next(offline[-1].glob(f"run-{run_id}.wandb")))
    (run,) = [r.run for r in records if r.WhichOneof("record_type") == "run"]
    assert run.run_id == run_id and run.project == "mindprobe-test"
    summary = _wandb_items(records, "summary")
    head = doc2["headline"]
    assert summary[f"worldsense/headline/{head['name']}"] == pytest.approx(100 * head["value"])
    assert summary["worldsense/items_done"] == len(read_records(run_dir / "records.jsonl"))
    config = _wandb_items(records, "config")
    assert config["benchmark"] == "worldsense" and "mindprobe_version" in config
    assert any(r.WhichOneof("record_type") == "artifact" for r in records)


def test_parquet_and_hf_round_trip_every_record(cli, tmp_path, shared_data):
    pytest.importorskip("datasets", reason="needs mindprobe[export] (installed by .[dev])")
    from datasets import load_from_disk

    from mindprobe.tracking.tables import read_hf, read_parquet

    runs = tmp_path / "runs"
    data = shared_data("mr_gsm8k")
    code, _, err = cli("run", "mr_gsm8k:sample", "--model", "random", "--data-dir", data,
                       "--runs-dir", runs, "--json")
    assert code == 0, err
    run_dir = next(runs.glob("mr_gsm8k/*/*"))
    records = read_records(run_dir / "records.jsonl")
    code, _, err = cli("export", "--format", "parquet", "--run", run_dir, "--out",
                       tmp_path / "r.parquet")
    assert code == 0, err

    def clean(recs):
        return [{k: v for k, v in r.items() if v is not None} for r in recs]

    assert read_parquet(tmp_path / "r.parquet") == clean(records)
    import pandas as pd

    frame = pd.read_parquet(tmp_path / "r.parquet")
    assert len(frame) == len(records) and frame["t1_hit"].dtype == bool
    assert pd.api.types.is_string_dtype(frame["reply"])  # replies as text
    code, _, err = cli("export", "--format", "hf", "--run", run_dir, "--out", tmp_path / "hf")
    assert code == 0, err
    assert len(load_from_disk(str(tmp_path / "hf"))) == len(records)
    assert read_hf(tmp_path / "hf") == clean(records)
    code, _, err = cli("export", "--format", "hf", "--run", run_dir, "--push", "me/x")
    assert code == 2 and "HF_TOKEN" in err


@pytest.mark.slow
def test_profiles_make_one_leaderboard(cli, tmp_path, shared_data):
    root = shared_data("worldsense").parent
    code, doc, err = cli("profile", "--model", "random", "--size", "quick", "--data-dir", root,
                         "--runs-dir", tmp_path / "runs", "--json")
    folder = Path(doc["profile"])
    other = tmp_path / "copy"
    shutil.copytree(folder, other)
    for fmt in ("csv", "json"):
        out = tmp_path / f"board.{fmt}"
        code, cmp, err = cli("profile", "--compare", folder, other, folder, "--out", out,
                             "--json")
        assert code == 0, err
        assert len(cmp["leaderboard"]) == 3 and "rows" not in cmp  # paired only for two
    board = json.loads((tmp_path / "board.json").read_text())
    import pandas as pd

    csv = pd.read_csv(tmp_path / "board.csv")
    assert list(csv["model"]) == ["random"] * 3
    for r in doc["results"]:
        heads = (f"{r['benchmark']} {r['metric']}", f"{r['benchmark']}:{r['variant']} "
                 f"{r['metric']}")
        cols = [c for c in board[0] if c.startswith(heads) and not c.endswith(
            ("ci_low", "ci_high"))]
        col = cols[0] if len(cols) == 1 else next(c for c in cols if c.startswith(heads[1]))
        assert board[0][col] == pytest.approx(r["value"])
        assert board[0][col + " ci_low"] == pytest.approx(r["ci_low"])


@pytest.mark.slow
def test_log_to_says_where_the_run_went(cli, tmp_path):
    """`run --log-to` confirms each tracker it logged to, as `export --format mlflow` does (it
    said nothing, so a mistyped relative sqlite:/// path went unnoticed)."""
    target = f"mlflow:sqlite:///{tmp_path}/m.db"
    code, _, err = _ws(cli, tmp_path / "runs", 5, "--log-to", target)
    assert code == 0, err
    run_dir = next((tmp_path / "runs").glob("worldsense/*/*"))
    assert f"logged {run_dir} to {target}" in " ".join(err.split()), err


@pytest.mark.slow
def test_metric_names_compare_across_models_and_sizes(cli, tmp_path, monkeypatch):
    """Three runs (two models, 40 and 80 items) to one SQLite store share every metric name
    (the model label and the interval method named metrics: 54 of 187 names were shared);
    the headline is in percent like the tables; MLflow's INFO lines stay quiet; artifacts
    go beside the store and the working folder stays empty (was: ./mlruns)."""
    from mlflow import MlflowClient

    from mindprobe.testing import TestServer

    work, store = tmp_path / "cwd", tmp_path / "store"
    work.mkdir()
    store.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("MLFLOW_EXPERIMENT_NAME", "compare")
    uri = f"sqlite:///{store}/m.db"
    with TestServer(reply="TRUE") as srv:
        for model, n, runs in (("random", 40, "a"), ("random", 80, "b"),
                               (f"openai:test-model@{srv.base_url}", 40, "c")):
            code, _, err = cli("run", "worldsense:fresh", "--model", model, "--limit", n,
                               "--runs-dir", tmp_path / runs, "--log-to", f"mlflow:{uri}")
            assert code == 0 and "INFO" not in err, err
    client = MlflowClient(tracking_uri=uri)
    got = client.search_runs([client.get_experiment_by_name("compare").experiment_id])
    names = [set(r.data.metrics) for r in got]
    assert len(got) == 3 and names[0] == names[1] == names[2] and len(names[0]) > 50
    assert not any("random" in k or "test-model" in k or "Wilson" in k for k in names[0])
    for r in got:
        m = r.data.metrics
        assert m["worldsense/headline/accuracy"] == pytest.approx(
            m["worldsense/accuracy/basic/accuracy/ALL"], abs=1e-9)
        assert "records.jsonl" in {a.path for a in client.list_artifacts(r.info.run_id)}
    assert list(work.iterdir()) == []
    assert (store / "m-artifacts").is_dir()


@pytest.mark.slow
def test_a_url_with_user_and_password_logs_with_them(cli, tmp_path, mlflow_server, monkeypatch):
    """`mlflow:http://user:pw@host` (was: `user:pw@host` taken as the host name, never
    logged): the credentials reach the server as MLflow sends them (HTTP Basic), and the
    manifest names the tracker without them."""
    import base64

    from mlflow import MlflowClient

    from mindprobe.testing.mlflow_server import TrackerProxy

    monkeypatch.setenv("MLFLOW_EXPERIMENT_NAME", "userinfo")
    basic = "Basic " + base64.b64encode(b"ann:Tracker%Pass1").decode()
    with TrackerProxy(mlflow_server, auth=basic) as proxy:
        host = proxy.url.split("://")[1]
        code, _, err = _ws(cli, tmp_path / "runs", 5, "--log-to",
                           f"mlflow:http://ann:Tracker%25Pass1@{host}")
        assert code == 0 and f"to mlflow:{proxy.url}" in " ".join(err.split()), err
        assert "Tracker%Pass1" not in err and "Tracker%25Pass1" not in err
    run_dir = next((tmp_path / "runs").glob("worldsense/*/*"))
    text = (run_dir / "manifest.json").read_text()
    assert "Pass1" not in text
    run_id = json.loads(text)["trackers"][f"mlflow:{proxy.url}"]
    assert MlflowClient(tracking_uri=mlflow_server).get_run(run_id).info.status == "FINISHED"
