"""A tracker run mindprobe opened is never left RUNNING by it, and never doubled: its id is
kept in the manifest as soon as it exists, an interrupted logging closes it as KILLED, and the
next logging (the resumed run, or the export) reopens the same MLflow run. Real processes,
signals and a real MLflow server behind a proxy that holds the metrics upload on 127.0.0.1."""

from __future__ import annotations

import json
import signal
import threading

import pytest

pytest.importorskip("mlflow", reason="needs mindprobe[mlflow] (installed by .[dev])")

from mindprobe.core.store import read_records  # noqa: E402
from mindprobe.testing.mlflow_server import TrackerProxy, mlflow_server  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with mlflow_server(tmp_path_factory.mktemp("mlflow")) as uri:
        yield uri


def _hold(proxy: TrackerProxy) -> None:
    """From now on the metrics upload hangs (until released)."""
    proxy.held, proxy.release = threading.Event(), threading.Event()
    proxy.hold = "runs/log-batch"


def _free(proxy: TrackerProxy) -> None:
    proxy.hold = None
    proxy.release.set()


def test_an_interrupted_logging_is_closed_and_resumed_into_the_same_run(
        tmp_path, server, spawn):
    """Was: SIGTERM or kill -9 while logging left the MLflow run RUNNING, the resume made a
    second run, and SIGTERM said "interrupted before the run started; nothing was recorded"."""
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=server)
    runs = tmp_path / "runs"
    with TrackerProxy(server) as proxy:
        args = ["run", "worldsense:fresh", "--model", "random", "--limit", "10", "--runs-dir",
                runs, "--log-to", f"mlflow:{proxy.url}"]
        _hold(proxy)
        proc = spawn(args)
        assert proxy.held.wait(240), proc.communicate(timeout=5)
        run_dir = next(runs.glob("worldsense/*/*"))
        key = f"mlflow:{proxy.url}"
        run_id = json.loads((run_dir / "manifest.json").read_text())["trackers"][key]
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
        err = " ".join(err.split())
        assert proc.returncode == 143, err
        assert "nothing was recorded" not in err and "the results are complete" in err
        assert f"--run{run_dir}--to{proxy.url}" in err.replace(" ", "")  # wrapped anywhere
        assert client.get_run(run_id).info.status == "KILLED"
        _free(proxy)
        proc = spawn(args)  # the resume: the same MLflow run, finished
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert json.loads((run_dir / "manifest.json").read_text())["trackers"][key] == run_id
        assert client.get_run(run_id).info.status == "FINISHED"
        exp = client.get_experiment_by_name("mindprobe").experiment_id
        assert len(client.search_runs([exp])) == 1
        # kill -9 while the export logs: RUNNING (nothing can close it) until the next logging
        _hold(proxy)
        export = ["export", "--format", "mlflow", "--run", run_dir, "--to", proxy.url]
        proc = spawn(export)
        assert proxy.held.wait(240), proc.communicate(timeout=5)
        proc.kill()
        proc.wait(30)
        assert client.get_run(run_id).info.status == "RUNNING"
        _free(proxy)
        proc = spawn(export)
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert client.get_run(run_id).info.status == "FINISHED"
        assert len(client.search_runs([exp])) == 1
        assert client.get_run(run_id).data.metrics["worldsense/items_done"] == len(
            read_records(run_dir / "records.jsonl"))
