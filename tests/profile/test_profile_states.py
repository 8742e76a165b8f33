"""Issue 32, observations 2 and 3: a profile whose planned benchmark did not finish exits
non-zero and its profile.json says what `mindprobe runs` says; resumed to the end, both say
finished and it exits 0. (A small data root: Already Said That alone, one chat per task.)"""

from __future__ import annotations

import json
import shutil

from mindprobe.testing import TestServer


def test_an_unfinished_benchmark_fails_the_profile_until_resumed(cli, shared_data, tmp_path):
    root = tmp_path / "data"
    shutil.copytree(shared_data("already_said_that"), root / "already_said_that")
    runs = tmp_path / "runs"

    def profile(url: str):
        return cli("profile", "--model", f"openai:test-model@{url}", "--data-dir", root,
                   "--runs-dir", runs, "-O", "already_said_that.n_samples=1",
                   "--max-attempts", 1, "--json")

    with TestServer(fault_500=1.0) as broken:
        code, doc, err = profile(broken.base_url)
    assert code == 1, err
    assert "not finished: already_said_that" in err
    folder = next(runs.glob("profile-quick___*"))
    manifest = json.loads((folder / "profile.json").read_text())
    ast = manifest["benchmarks"]["already_said_that"]
    assert ast["status"] == "failed"
    code, listed, _ = cli("runs", "--runs-dir", folder, "--json")
    assert {r["status"] for r in listed} == {"failed"}
    assert {s["state"] for s in ast["states"].values()} == {"failed"}
    with TestServer() as healthy:
        code, doc, err = profile(healthy.base_url)
    assert code == 0, err
    manifest = json.loads((folder / "profile.json").read_text())
    assert manifest["benchmarks"]["already_said_that"]["status"] == "finished"
    code, listed, _ = cli("runs", "--runs-dir", folder, "--json")
    assert {r["status"] for r in listed} == {"finished"}
