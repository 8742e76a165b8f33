"""Shared fixtures: where the official data lives, and skipping cleanly when it is absent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mindprobe.cli import main

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("MINDPROBE_SHARED_DATA", REPO.parent / "shared" / "data"))


#: Locations set to the session's temporary home: ours, XDG's, and whatever derives from HOME.
ISOLATED_ENV = ("MINDPROBE_CACHE_DIR", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME",
                "HOME")
#: Overrides removed, so these follow MINDPROBE_CACHE_DIR (the session's or a test's own):
#: the data root, the response cache, FanOutQA's Wikipedia cache.
DERIVED_ENV = ("MINDPROBE_DATA_DIR", "MINDPROBE_RESPONSE_CACHE", "MINDPROBE_FANOUTQA_CACHE")


@pytest.fixture(scope="session", autouse=True)
def isolated_home(tmp_path_factory):
    """Tests never touch the user's home: every cache and data directory (ours, XDG's and
    whatever derives from HOME) points into one temporary folder for the whole session, and
    subprocesses inherit it. Tests that want their own cache still set MINDPROBE_CACHE_DIR."""
    root = tmp_path_factory.mktemp("home")
    values = {"MINDPROBE_CACHE_DIR": root / ".cache" / "mindprobe",
              "XDG_CACHE_HOME": root / ".cache", "XDG_DATA_HOME": root / ".local" / "share",
              "XDG_CONFIG_HOME": root / ".config", "HOME": root}
    with pytest.MonkeyPatch.context() as mp:
        for key in ISOLATED_ENV:
            mp.setenv(key, str(values[key]))
        for key in DERIVED_ENV:
            mp.delenv(key, raising=False)
        mp.delenv("COLUMNS", raising=False)  # table widths: the code's, not the caller's shell
        yield root


def shared_data_dir(benchmark: str) -> Path:
    """Return ../shared/data/<benchmark>, or skip the test with the reason it is missing."""
    path = SHARED_DATA / benchmark
    if not path.is_dir():
        pytest.skip(f"official data for {benchmark} not found at {path} (set MINDPROBE_SHARED_DATA)")
    return path


@pytest.fixture
def shared_data():
    """Factory fixture: shared_data("worldsense") -> Path, skipping when the data is absent."""
    return shared_data_dir


@pytest.fixture
def cli(tmp_path, capsys, monkeypatch):
    """cli(*args) -> (exit code, parsed stdout JSON or text, stderr), isolated caches."""
    monkeypatch.setenv("MINDPROBE_CACHE_DIR", str(tmp_path / "cache"))

    def run(*args: str):
        code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        try:
            doc = json.loads(out) if "--json" in args else out
        except ValueError:
            doc = out
        return code, doc, err
    return run


@pytest.fixture
def spawn(tmp_path):
    """spawn(args) -> `python -m mindprobe.cli ...` as a real process (kill -9 / Ctrl-C tests)."""
    env = {**os.environ, "MINDPROBE_CACHE_DIR": str(tmp_path / "cache"), "PYTHONUNBUFFERED": "1"}

    def start(args: list) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "mindprobe.cli", *map(str, args)],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return start


@pytest.fixture
def tmpfs(tmp_path) -> Iterator[Callable[[str, int], Path]]:
    """tmpfs(name, kib) -> a folder on a tmpfs of that size (remounting resizes it): a real
    full disk. Skips with the reason where mounting is not allowed (not root, a container)."""
    mounted: list[Path] = []

    def mount(name: str, kib: int) -> Path:
        where = tmp_path / name
        where.mkdir(exist_ok=True)
        opts = f"remount,size={kib}k" if where in mounted else f"size={kib}k"
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(where)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            why = done.stderr.strip() or f"mount exited {done.returncode}"
            pytest.skip(f"cannot mount a small tmpfs here ({why}); a full disk needs one")
        if where not in mounted:
            mounted.append(where)
        return where

    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs (a real full disk) needs root")
    yield mount
    for where in mounted:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)
