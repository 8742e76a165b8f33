"""Issue 41 items 5, 6, 7, 13 and 16: every command that writes a file the user names goes
through the one writer (`mindprobe.core.files`). Tried as a hostile user would, each surface
refuses to write into or over a run's own files, refuses to replace an existing file without
--force (a report's documented overwrite replaces it), never writes through a symlink, and
leaves no temporary file; the Hugging Face export is swapped in whole, a full disk and an
unreachable Hub are one message."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from mindprobe.cli import main
from mindprobe.testing import TestServer

pytestmark = pytest.mark.slow


@dataclass
class Runs:
    mr: Path
    ws: Path
    fq: Path
    profiles: list[Path]
    mr_data: Path


def shared_data_dir(benchmark: str) -> Path:
    repo = Path(__file__).resolve().parents[2]
    path = Path(os.environ.get("MINDPROBE_SHARED_DATA", repo.parent / "shared" / "data"))
    if not (path / benchmark).is_dir():
        pytest.skip(f"official data for {benchmark} not found at {path / benchmark}")
    return path / benchmark


def _main(*args: object) -> None:
    assert main([str(a) for a in args]) == 0, args


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Runs:
    """One small run of three benchmarks, and three profile folders holding the first."""
    root = tmp_path_factory.mktemp("surfaces")
    mr_data = shared_data_dir("mr_gsm8k")
    _main("run", "mr_gsm8k:sample", "--model", "random", "--data-dir", mr_data,
          "--runs-dir", root / "runs", "--limit", 5, "--json")
    _main("run", "worldsense:fresh", "--model", "random", "--runs-dir", root / "runs",
          "--limit", 5, "--json")
    with TestServer(reply="Some answer") as srv:
        _main("run", "fanoutqa", "--model", f"openai:test-model@{srv.base_url}", "--limit", 3,
              "--data-dir", shared_data_dir("fanoutqa"), "--runs-dir", root / "runs",
              "--no-cache", "--max-attempts", 1, "--json")
    (mr,) = (root / "runs" / "mr_gsm8k").glob("*/*")
    (ws,) = (root / "runs" / "worldsense").glob("*/*")
    (fq,) = (root / "runs" / "fanoutqa").glob("*/*")
    profiles = []
    for i in range(3):
        folder = root / f"profile-{i}"
        shutil.copytree(mr, folder / "runs" / "mr_gsm8k")
        (folder / "profile.json").write_text(json.dumps({
            "model_label": "random", "size": "quick",
            "benchmarks": {"mr_gsm8k": {"runs": ["runs/mr_gsm8k"]}}}))
        profiles.append(folder)
    return Runs(mr, ws, fq, profiles, mr_data)


#: name -> (the command given the runs and --out, suffix of --out, a folder?, replaced
#: without --force as documented?)
SURFACES = {
    "export inspect": (lambda r, o: ["export", "--format", "inspect", "--run", r.mr, "--out", o],
                       ".eval", False, False),
    "export parquet": (lambda r, o: ["export", "--format", "parquet", "--run", r.mr, "--out", o],
                       ".parquet", False, False),
    "export hf": (lambda r, o: ["export", "--format", "hf", "--run", r.mr, "--out", o],
                  "", True, False),
    "export fanoutqa": (lambda r, o: ["export", "fanoutqa", "--run", r.fq, "--out", o],
                        ".jsonl", False, False),
    "export mr_gsm8k --fresh": (lambda r, o: ["export", "mr_gsm8k", "--fresh", "--data-file",
                                              r.mr_data / "sample_records.jsonl", "--out", o],
                                ".jsonl", False, False),
    "profile --compare": (lambda r, o: ["profile", "--compare", *r.profiles, "--out", o],
                          ".csv", False, False),
    "report": (lambda r, o: ["report", r.mr, "--out", o], ".html", False, True),
}


def _temporaries(*folders: Path) -> list[Path]:
    return [p for f in folders for p in f.rglob(".*") if ".mindprobe." in p.name
            or p.name.endswith((".tmp", ".part"))]


def _fingerprint(run: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(run.iterdir()) if p.is_file()}


@pytest.mark.parametrize("surface", SURFACES)
def test_every_writer_surface_is_safe(cli, runs, tmp_path, surface):
    argv, suffix, folder, documented = SURFACES[surface]
    force = [] if documented else ["--force"]
    before = _fingerprint(runs.mr)
    # 1. a run's own files: refused, one message, the run unchanged
    for out in (runs.mr / "records.jsonl", runs.mr / f"mine{suffix}", runs.mr):
        code, _, err = cli(*argv(runs, out), *force)
        assert code == 2 and "Traceback" not in err, (out, err)
        if out.suffix == suffix or out == runs.mr and folder:
            assert "run folder" in err or "holds mindprobe runs" in err, err
    assert _fingerprint(runs.mr) == before
    # 2. an existing --out: kept without --force (unless the command documents replacing it)
    out = tmp_path / f"out{suffix}"
    code, _, err = cli(*argv(runs, out))
    assert code == 0, err
    first = _fingerprint(out) if folder else out.read_bytes()
    code, _, err = cli(*argv(runs, out))
    if documented:
        assert code == 0, err
    else:
        assert code == 2 and "already exists; pass --force" in err, err
        assert (_fingerprint(out) if folder else out.read_bytes()) == first
        code, _, err = cli(*argv(runs, out), "--force")
        assert code == 0, err
    # 3. a symlink at --out: replaced as a link, its target never written
    victim = tmp_path / "victim"
    victim.mkdir() if folder else victim.write_text("precious\n")
    (victim / "keep.txt").write_text("precious\n") if folder else None
    link = tmp_path / f"link{suffix}"
    link.symlink_to(victim)
    if documented:
        code, _, err = cli(*argv(runs, link))
    else:
        code, _, err = cli(*argv(runs, link))
        assert code == 2 and "already exists" in err, err
        code, _, err = cli(*argv(runs, link), "--force")
    assert code == 0, err
    assert not link.is_symlink()
    assert ((victim / "keep.txt") if folder else victim).read_text() == "precious\n"
    assert (os.listdir(victim) == ["keep.txt"]) if folder else True
    # 4. nothing left behind
    assert not _temporaries(tmp_path, runs.mr.parent)


def test_export_onto_the_runs_own_records_is_refused(cli, runs):
    """Item 5, exactly as reported: the records are unchanged and the message says why."""
    records = (runs.mr / "records.jsonl").read_bytes()
    code, _, err = cli("export", "--format", "parquet", "--run", runs.mr, "--out",
                       runs.mr / "records.jsonl")
    assert code == 2 and "inside the run folder" in err and "Traceback" not in err
    assert (runs.mr / "records.jsonl").read_bytes() == records


def test_worldsense_export_keeps_an_existing_results_file_without_force(cli, runs, tmp_path):
    out = tmp_path / "testset"
    code, _, err = cli("export", "worldsense", "--run", runs.ws, "--out", out)
    assert code == 0, err
    (results,) = (out / "results").iterdir()
    results.write_text("mine\n")
    code, _, err = cli("export", "worldsense", "--run", runs.ws, "--out", out)
    assert code == 2 and "--force" in err and results.read_text() == "mine\n"
    code, _, err = cli("export", "worldsense", "--run", runs.ws, "--out", out, "--force")
    assert code == 0 and results.read_text() != "mine\n"
    code, _, err = cli("export", "worldsense", "--run", runs.ws, "--out", runs.mr)
    assert code == 2 and "run folder" in err
    assert not (runs.mr / "results").exists() and not (runs.mr / "trials.jsonl.bz2").exists()


def test_a_lock_symlink_is_never_written_through_on_resume(cli, runs, tmp_path):
    """Item 6: `R/.lock` pointing at another file: the resume replaces the link, and the
    file it pointed to is untouched."""
    run = tmp_path / "run"
    shutil.copytree(runs.mr, run / "mr_gsm8k" / "sample" / runs.mr.name)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    lock = run / "mr_gsm8k" / "sample" / runs.mr.name / ".lock"
    lock.unlink()
    lock.symlink_to(victim)
    code, _, err = cli("run", "mr_gsm8k:sample", "--model", "random", "--data-dir", runs.mr_data,
                       "--runs-dir", run, "--limit", 6)
    assert code == 0, err
    assert victim.read_text() == "precious\n" and not lock.is_symlink()
    records = run / "mr_gsm8k" / "sample" / runs.mr.name / "records.jsonl"
    assert len(records.read_text().splitlines()) == 6


#: How the child process is slowed down right after the export's content is written (before
#: it is put in place), so the signal lands mid-write.
SLOWED = {"hf": ("datasets", "Dataset", "save_to_disk"),
          "parquet": ("pyarrow.parquet", None, "write_table")}


@pytest.mark.parametrize("fmt", ["parquet", "hf"])
def test_export_interrupted_keeps_the_previous_export(runs, tmp_path, fmt):
    """Items 7 and 16: kill -9 or Ctrl-C in the middle of `export --format parquet|hf` over an
    existing export (with --force) leaves the previous one whole and loadable; the kill -9's
    hidden temporary is removed by the next export to the same place."""
    pytest.importorskip("datasets" if fmt == "hf" else "pyarrow")
    from mindprobe.tracking.tables import read_hf, read_parquet

    read = read_hf if fmt == "hf" else read_parquet
    out = tmp_path / ("hf" if fmt == "hf" else "r.parquet")
    argv = ["export", "--format", fmt, "--run", str(runs.mr), "--out", str(out)]
    assert main(argv) == 0
    before = read(out)
    module, cls, name = SLOWED[fmt]
    owner = f"{module.split('.')[0]}.{cls}" if cls else "mod"
    slow = tmp_path / "slow.py"
    slow.write_text(
        "import importlib, sys, time\n"
        f"mod = importlib.import_module({module!r})\n"
        + (f"import {module.split('.')[0]}\n" if cls else "")
        + f"real = getattr({owner}, {name!r})\n"
        "def slowed(*a, **k):\n"
        "    real(*a, **k)\n"
        "    print('written', flush=True)\n"
        "    time.sleep(60)\n"
        f"setattr({owner}, {name!r}, slowed)\n"
        "from mindprobe.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n")
    for sig in (signal.SIGINT, signal.SIGKILL):  # the kill -9 last: its leftover stays
        child = subprocess.Popen([sys.executable, str(slow), *argv, "--force"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert child.stdout.readline().strip() == "written"
        child.send_signal(sig)
        _, err = child.communicate(timeout=60)
        assert "Traceback" not in err, err
        assert read(out) == before
    assert _temporaries(tmp_path)  # the kill -9's, which nothing could remove
    assert main([*argv, "--force"]) == 0
    assert read(out) == before and not _temporaries(tmp_path)


@pytest.mark.parametrize("fmt", ["parquet", "hf"])
def test_full_disk_export_is_one_message_and_keeps_the_previous(cli, runs, tmpfs, fmt):
    """Items 7 and 13: a Parquet or HF export to a full disk: one message, exit 2, the previous
    export intact, no temporary left."""
    pytest.importorskip("datasets" if fmt == "hf" else "pyarrow")
    disk = tmpfs("small", 1024)
    out = disk / ("out.parquet" if fmt == "parquet" else "hf")
    code, _, err = cli("export", "--format", fmt, "--run", runs.mr, "--out", out)
    assert code == 0, err
    previous = sorted(p.read_bytes() for p in ([out] if out.is_file() else out.iterdir()))
    filler = disk / "filler"
    with pytest.raises(OSError), open(filler, "wb") as f:  # noqa: PTH123 (fill the disk)
        while True:
            f.write(b"\0" * 4096)
            f.flush()
    code, _, err = cli("export", "--format", fmt, "--run", runs.mr, "--out", out, "--force")
    assert code == 2 and "Traceback" not in err, err
    assert "no space left on the disk holding" in err and "previous one is kept" in err, err
    assert sorted(p.read_bytes() for p in ([out] if out.is_file() else out.iterdir())) \
        == previous
    assert not _temporaries(disk)


def test_parquet_export_to_proc_is_one_message(cli, runs):
    """Item 13: a folder nothing can be written to is one message, exit 2."""
    code, _, err = cli("export", "--format", "parquet", "--run", runs.mr, "--out",
                       "/proc/x.parquet")
    assert code == 2 and "Traceback" not in err and "/proc/x.parquet" in err, err


def test_hf_push_without_network_is_one_message(cli, runs, monkeypatch, tmp_path):
    """Item 13: --push with the Hub unreachable (a closed port on 127.0.0.1): one message,
    exit 2, and the local export (saved first) is kept."""
    pytest.importorskip("datasets")
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("HF_TOKEN", "hf_secret_token_value")
    t0 = time.monotonic()
    code, _, err = cli("export", "--format", "hf", "--run", runs.mr, "--out", tmp_path / "hf",
                       "--push", "me/x")
    assert code == 2 and "Traceback" not in err, err
    assert "--push me/x" in err and "hf_secret_token_value" not in err
    assert (tmp_path / "hf" / "dataset_info.json").is_file()
    assert time.monotonic() - t0 < 60

