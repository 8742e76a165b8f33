"""Issue 33.3: a full disk is a clean stop, never a traceback. Where the run writes: one message
naming the folder and its free space, exit 2, the manifest `interrupted`, no temporary file
left, and the resumed run identical to an uninterrupted one. Where the cache lives: the cache
turns read-only and every item still runs. Real full disks: small tmpfs mounts (root only;
skipped with the reason elsewhere)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mindprobe.core.data import decoded
from mindprobe.core.store import read_records
from mindprobe.testing import TestServer
from mindprobe.testing.responders import worldsense_answer


def _args(url: str, runs: Path, *more: object) -> list[object]:
    return ["run", "worldsense:fresh", "--model", f"openai:test-model@{url}", "--runs-dir", runs,
            "--limit", 300, "--json", *more]


def _outcome(doc: dict, runs: Path) -> tuple[dict, list]:
    run = next(runs.glob("worldsense/fresh/*"))
    records = sorted((r["id"], r["reply"], r["correct"]) for r in
                     read_records(run / "records.jsonl"))
    return {k: v for k, v in doc.items() if k not in ("usage", "run")}, records


def _leftovers(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith(".tmp")]


def test_records_folder_full_stops_cleanly_and_resumes_identically(cli, tmp_path, tmpfs):
    with TestServer(responder=worldsense_answer) as srv:
        code, ref, err = cli(*_args(srv.base_url, tmp_path / "ref", "--no-cache"))
        assert code == 0, err
        disk = tmpfs("runs", 64)
        runs = disk / "runs"
        code, doc, err = cli(*_args(srv.base_url, runs, "--no-cache"))
        assert code == 2 and "Traceback" not in err, err
        assert f"no space left on the disk holding {runs}" in err and "MB free" in err, err
        assert doc["exit_code"] == 2  # --json: the one document, with the message
        run = next(runs.glob("worldsense/fresh/*"))
        manifest = json.loads((run / "manifest.json").read_text())
        assert manifest["status"] == "interrupted"
        kept = read_records(run / "records.jsonl")
        assert 0 < len(kept) < 300
        assert not _leftovers(disk)
        tmpfs("runs", 4096)  # room again
        code, doc, err = cli(*_args(srv.base_url, runs, "--no-cache"))
        assert code == 0, err
    assert json.loads((run / "manifest.json").read_text())["status"] == "finished"
    assert _outcome(doc, runs) == _outcome(ref, tmp_path / "ref")


def test_a_full_disk_before_the_first_record_is_one_message(cli, tmp_path, tmpfs):
    """No room even for the lock's note or the manifest: one message, nothing half-written."""
    disk = tmpfs("runs", 32)
    filler = disk / "filler"
    with pytest.raises(OSError), open(filler, "wb") as f:
        while True:
            f.write(b"\0" * 4096)
            f.flush()
    with TestServer(responder=worldsense_answer) as srv:
        code, _, err = cli(*_args(srv.base_url, disk / "runs", "--no-cache"))
    assert code == 2 and "Traceback" not in err, err
    assert "no space left on the disk holding" in err, err
    assert not _leftovers(disk) and not list(disk.rglob("manifest.json"))


def test_cache_folder_full_turns_the_cache_read_only(cli, tmp_path, tmpfs):
    disk = tmpfs("cache", 48)
    with TestServer(responder=worldsense_answer) as srv:
        code, ref, err = cli(*_args(srv.base_url, tmp_path / "ref", "--no-cache"))
        assert code == 0, err
        code, doc, err = cli(*_args(srv.base_url, tmp_path / "runs", "--cache",
                                    disk / "responses.sqlite"))
        assert code == 0 and "Traceback" not in err, err
        assert "read-only" in err and "MB free" in err, err
        assert doc["usage"]["errors"] == 0
        assert _outcome(doc, tmp_path / "runs") == _outcome(ref, tmp_path / "ref")
        # the full cache still answers what it holds, and a second run is as clean
        code, again, err = cli(*_args(srv.base_url, tmp_path / "again", "--cache",
                                      disk / "responses.sqlite"))
        assert code == 0 and again["usage"]["errors"] == 0, err
    assert not list(disk.glob("*.damaged-*"))  # full is not damaged: nothing set aside


def test_decoded_cache_on_a_full_disk_leaves_no_partial_file(tmp_path, tmpfs, monkeypatch):
    disk = tmpfs("cache", 16)
    monkeypatch.setenv("MINDPROBE_CACHE_DIR", str(disk))
    src = tmp_path / "data.txt"
    src.write_text("x")
    big = [f"line {i}" for i in range(20000)]  # ~200 KB marshalled: no room for it
    assert decoded(src, None, "big", lambda p: big) == big
    assert not _leftovers(disk) and not list((disk / "decoded").iterdir())
