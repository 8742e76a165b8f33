"""The seams of the design hold: who may import what, and a fast CLI start."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "mindprobe"
#: The generic layers: they know benchmarks only through the registry and the Benchmark contract.
GENERIC = ("report", "commands", "profiling", "cli.py")
#: The module names every built-in benchmark package uses for the same roles.
STANDARD_MODULES = ("options", "task", "data", "metrics", "report", "upstream")


def _built_ins() -> dict[str, str]:
    """name -> "module:Class" of the built-in benchmarks, as pyproject.toml registers them."""
    doc = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return doc["project"]["entry-points"]["mindprobe.benchmarks"]


def _generic_files() -> list[Path]:
    return sorted(p for part in GENERIC for p in
                  ([SRC / part] if part.endswith(".py") else (SRC / part).rglob("*.py")))


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


def test_generic_layers_never_name_a_benchmark():
    """report/, commands/, profiling/ and cli.py hold no benchmark's name (in any spelling, in
    code, help or docstrings): what is a benchmark's lives in its own package."""
    words = set()
    for name, target in _built_ins().items():
        words |= {name, name.replace("_", "-"), name.replace("_", " ")}
        words.add(target.rpartition(":")[2].removesuffix("Benchmark"))  # e.g. "WorldSense"
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, sorted(words))) + r")\b", re.I)
    found = [f"{p.relative_to(SRC)}:{i}: {m.group(0)!r}" for p in _generic_files()
             for i, line in enumerate(p.read_text().splitlines(), 1)
             for m in [pattern.search(line)] if m]
    assert found == []


def test_generic_layers_never_import_a_benchmark():
    bad = [f"{p.relative_to(SRC)} imports {m}" for p in _generic_files() for m in _imports(p)
           if m == "mindprobe.benchmarks" or m.startswith("mindprobe.benchmarks.")]
    assert bad == []


def test_every_built_in_benchmark_lives_in_one_package_with_the_standard_modules():
    for name, target in _built_ins().items():
        package = SRC / "benchmarks" / name
        assert target.startswith(f"mindprobe.benchmarks.{name}."), target
        missing = [m for m in STANDARD_MODULES if not (package / f"{m}.py").is_file()]
        assert missing == [], f"{name} lacks {missing}"


def test_benchmark_verbs_are_declared_not_parsed():
    """A benchmark's verbs are `core.verbs.Verb` declarations in its `verbs.py`, never argparse;
    the names it declares in its class are the ones that module defines."""
    from mindprobe.commands import verbs_of
    from mindprobe.core.verbs import Verb
    from mindprobe.registry import BENCHMARKS

    for name in _built_ins():
        verbs = verbs_of(name)
        assert all(isinstance(v, Verb) for v in verbs.values())
        assert set(BENCHMARKS[name].verbs) <= set(verbs)


def test_benchmarks_come_from_entry_points():
    """No benchmark is named in the registry: each one is an entry point (pyproject.toml)."""
    text = (SRC / "registry.py").read_text()
    assert not any(name in text for name in ("worldsense", "already_said_that", "mr_gsm8k",
                                             "fanoutqa", "SortBenchmark"))


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["list"],
                                  ["run", "worldsense", "--help"], ["models"],
                                  ["build", "sort", "--help"], ["sweep", "sort", "--help"],
                                  ["export", "worldsense", "--help"],
                                  ["judge", "fanoutqa", "--help"],
                                  ["run", "worldsense:nope", "--model", "random"]])
def test_light_commands_do_not_import_pandas_or_numpy(argv):
    code = (f"import sys\nfrom mindprobe.cli import main\ntry:\n    main({argv!r})\n"
            "except SystemExit:\n    pass\nprint('HEAVY', sorted(m for m in ('pandas', 'numpy', "
            "'aiohttp') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60).stdout
    assert "HEAVY []" in out, out


def test_the_model_protocol_lives_in_core_and_keeps_its_old_import_path():
    """`mindprobe.models.base` re-exports core's protocol: the same objects, not copies."""
    from mindprobe.core import model
    from mindprobe.models import base

    assert base.__all__ and all(getattr(base, n) is getattr(model, n) for n in base.__all__)
    assert {"Request", "Completion", "Usage", "CallContext", "ChoiceScores", "Model",
            "TransientError", "Reasoning", "NO_REASONING", "split_reasoning"} <= set(base.__all__)
    assert _violations("core", ("mindprobe.models",)) == []


# -- layers and loops, read from every import (mindprobe.devtools.architecture) ------------------

def _write_package(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / "mindprobe" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.fixture(scope="module")
def modules():
    """The package's modules and their imports, read once for the tests below."""
    from mindprobe.devtools.architecture import read_modules

    return read_modules()


@pytest.mark.slow
def test_every_import_goes_down_the_layers(modules):
    """A module imports its own package and lower layers only (imports inside functions and
    under TYPE_CHECKING count): e.g. core never imports models/, report/ or a benchmark."""
    from mindprobe.devtools.architecture import layering_violations

    assert layering_violations(modules) == []


def test_no_modules_import_each_other_in_a_loop(modules):
    from mindprobe.devtools.architecture import import_cycles

    assert import_cycles(modules) == []


def test_every_package_and_top_level_module_has_a_layer(modules):
    from mindprobe.devtools.architecture import LAYERS

    placed = [u for _, _, units in LAYERS for u in units]
    assert len(placed) == len(set(placed))
    assert {m.unit for m in modules.values()} == set(placed)


def test_the_layer_order_puts_the_model_protocol_in_core_under_the_backends():
    from mindprobe.devtools.architecture import LAYERS

    order = [u for _, _, units in LAYERS for u in units]
    for high, low in [("cli.py", "commands"), ("commands", "benchmarks"), ("benchmarks", "engine"),
                      ("engine", "models"), ("resources", "models"), ("models", "core"),
                      ("report", "core"), ("core", "errors.py")]:
        assert order.index(high) < order.index(low), (high, low)


def test_loops_are_found_through_function_level_imports_and_lazy_exports(tmp_path):
    """The checks see what deferring an import would hide: a loop closed by an import inside a
    function, one through a package's `lazy_exports`, and an import up a layer in a function."""
    from mindprobe.devtools.architecture import import_cycles, layering_violations, read_modules

    root = _write_package(tmp_path, {
        "__init__.py": "",
        "core/__init__.py": "from mindprobe.lazy import lazy_exports\n"
                            "_M = {'d': ['D']}\n__getattr__ = lazy_exports(__name__, _M)\n",
        "core/a.py": "from mindprobe.core.b import B\n",
        "core/b.py": "B = 1\ndef f():\n    from mindprobe.core import a\n",
        "core/d.py": "def g():\n    from mindprobe.models.x import X\n",
        "lazy.py": "",
        "models/__init__.py": "from mindprobe.lazy import lazy_exports\n"
                              "__getattr__ = lazy_exports('mindprobe.models', {'x': ['X']})\n",
        "models/x.py": "from .. import models\nX = 1\n",
    })
    mods = read_modules(root)
    assert mods["mindprobe.core"].imports == {"mindprobe.lazy", "mindprobe.core.d"}
    assert ["mindprobe.core.a", "mindprobe.core.b"] in import_cycles(mods)
    assert ["mindprobe.models", "mindprobe.models.x"] in import_cycles(mods)
    bad = layering_violations(mods)
    assert any(b.startswith("mindprobe.core.d (core, layer 6) imports mindprobe.models.x")
               for b in bad), bad


@pytest.mark.slow
def test_the_architecture_page_is_generated_from_the_code(tmp_path, modules, capsys):
    """docs/architecture.md is what `python -m mindprobe.devtools.architecture` writes now:
    regenerate it after changing imports or layers; `--check` refuses a stale page."""
    from mindprobe.devtools.architecture import main, render

    page = ROOT / "docs" / "architecture.md"
    text = page.read_text()
    assert text == render(modules), (
        "docs/architecture.md is stale: run python -m mindprobe.devtools.architecture "
        "docs/architecture.md")
    assert "mermaid" not in text.lower() and "<script" not in text  # plain Markdown, offline
    assert "| 6 | core | `core/` |" in text and "### `models/`" in text
    stale = tmp_path / "architecture.md"
    stale.write_text(text.replace("core", "kernel"))
    assert main(["--check", str(stale)]) == 1
    assert "is stale: run python -m mindprobe.devtools.architecture" in capsys.readouterr().err
    assert main([str(stale)]) == 0 and stale.read_text() == text
    assert main([]) == 2
