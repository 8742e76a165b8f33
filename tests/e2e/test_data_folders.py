"""Issue 32, observations 1 and 7: one data-folder rule for every command. A benchmark's own
folder or the data root (the folder holding worldsense/, fanoutqa/, ... as shared/data) is
accepted by `run`, `analyse`, `report` and the library; the folder a run read is recorded and
scores it again (FanOutQA reads its questions when it scores); `report --data-dir` exists."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import mindprobe
from mindprobe.core.data import benchmark_folder
from mindprobe.registry import get_benchmark
from mindprobe.testing import TestServer


def test_the_folder_rule_tells_a_benchmark_folder_from_the_data_root(shared_data):
    for name in ("already_said_that", "worldsense", "fanoutqa"):
        root = shared_data(name).parent
        files = get_benchmark(name).data_files
        assert benchmark_folder(name, root, files) == root / name
        # Already Said That's own folder holds a sub-folder of its name: still its folder
        assert benchmark_folder(name, root / name, files) == root / name
    assert benchmark_folder("worldsense", None) is None


@pytest.mark.slow
def test_run_takes_the_data_root_and_records_the_folder(cli, shared_data, tmp_path):
    root = shared_data("worldsense").parent
    code, doc, err = cli("run", "worldsense", "--model", "random", "--data-dir", root,
                         "--limit", 20, "--runs-dir", tmp_path, "--json")
    assert code == 0, err
    manifest = json.loads((Path(doc["run"]) / "manifest.json").read_text())
    assert manifest["data_dir"] == str((root / "worldsense").resolve())
    res = mindprobe.evaluate("worldsense", "random", data_dir=root, limit=20,
                             runs_dir=tmp_path, progress=False)
    assert res.run_dir == Path(doc["run"])  # the library: the same rule, the same run


@pytest.mark.slow


def test_fanoutqa_is_scored_from_the_folder_the_run_read(cli, shared_data, tmp_path):
    """The run's data folder is not the data cache: scoring (run, analyse, report) reads the
    questions from the folder the run recorded; once it is gone, --data-dir (of `analyse`
    and `report` alike) gives another, and the warning names only options that exist."""
    copy = tmp_path / "data"
    shutil.copytree(shared_data("fanoutqa"), copy / "fanoutqa")
    runs = tmp_path / "runs"
    with TestServer() as srv:
        code, doc, err = cli("run", "fanoutqa", "--model", f"openai:test-model@{srv.base_url}",
                             "--data-dir", copy, "--limit", 3, "--runs-dir", runs, "--json")
    assert code == 0, err
    run = doc["run"]
    assert doc["state"] == "finished" and doc["headline"]["n"] == 3
    code, again, err = cli("analyse", "fanoutqa", "--run", run, "--json")
    assert code == 0, err
    assert again["headline"] == doc["headline"]
    code, _, err = cli("report", run, "--out", tmp_path / "r.md")
    assert code == 0 and "warning" not in err, err
    shutil.rmtree(copy)  # the folder the run read is gone
    code, _, err = cli("report", run, "--out", tmp_path / "r2.md")
    assert code == 0 and "cannot analyse" in err and "--data-dir" in err
    root = shared_data("fanoutqa").parent
    code, _, err = cli("report", run, "--data-dir", root, "--out", tmp_path / "r3.md")
    assert code == 0 and "warning" not in err, err
    code, again, err = cli("analyse", "fanoutqa", "--run", run, "--data-dir", root, "--json")
    assert code == 0 and again["headline"] == doc["headline"], err
    res = mindprobe.load_run(run).results(data_dir=root)  # the library, the same rule
    assert res.headline.value == doc["headline"]["value"]
