"""The seams of the design hold: who may import what, and a fast CLI start."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "mindprobe"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
    return out


def _violations(folder: str, forbidden: tuple[str, ...]) -> list[str]:
    bad = []
    for path in sorted((SRC / folder).rglob("*.py")):
        for mod in _imports(path):
            if any(mod == f or mod.startswith(f + ".") for f in forbidden):
                bad.append(f"{path.relative_to(SRC)} imports {mod}")
    return bad


def test_benchmarks_never_import_the_cli_or_http():
    assert _violations("benchmarks", ("mindprobe.cli", "mindprobe.commands", "argparse",
                                      "aiohttp")) == []


def test_core_never_imports_a_benchmark_argparse_or_aiohttp():
    assert _violations("core", ("mindprobe.benchmarks", "mindprobe.commands", "mindprobe.cli",
                                "argparse", "aiohttp")) == []


def test_models_and_resources_never_import_benchmarks_or_cli():
    for folder in ("models", "resources"):
        if (SRC / folder).is_dir():
            assert _violations(folder, ("mindprobe.benchmarks", "mindprobe.commands",
                                        "mindprobe.cli", "argparse")) == []


def test_the_library_never_imports_the_cli():
    """`mindprobe.evaluate()` and the engine under it work without argparse or commands/."""
    assert _violations("engine", ("mindprobe.cli", "mindprobe.commands", "argparse")) == []
    for module in ("api.py", "registry.py", "__init__.py"):
        bad = [m for m in _imports(SRC / module)
               if m.split(".")[0] == "argparse" or m.startswith(("mindprobe.cli",
                                                                 "mindprobe.commands"))]
        assert bad == [], module


def test_the_run_command_leaves_the_lifecycle_to_the_library():
    """commands/run.py parses and prints: no store, runner, cache or model start of its own."""
    assert not {m for m in _imports(SRC / "commands" / "run.py")} & {
        "mindprobe.core.store", "mindprobe.core.runner", "mindprobe.core.cache", "os.environ"}


def test_benchmarks_come_from_entry_points():
    """No benchmark is named in the registry: each one is an entry point (pyproject.toml)."""
    text = (SRC / "registry.py").read_text()
    assert not any(name in text for name in ("worldsense", "already_said_that", "mr_gsm8k",
                                             "fanoutqa", "SortBenchmark"))


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["list"],
                                  ["run", "worldsense", "--help"], ["models"],
                                  ["run", "worldsense:nope", "--model", "random"]])
def test_light_commands_do_not_import_pandas_or_numpy(argv):
    code = (f"import sys\nfrom mindprobe.cli import main\ntry:\n    main({argv!r})\n"
            "except SystemExit:\n    pass\nprint('HEAVY', sorted(m for m in ('pandas', 'numpy', "
            "'aiohttp') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60).stdout
    assert "HEAVY []" in out, out
