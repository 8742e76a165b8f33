"""The package's layers, read from its imports: who may import whom, and the manual's page.

The layer order below is the design; the import graph is read from the source with `ast`
(every `import`, at module level, inside functions and under `TYPE_CHECKING`, plus the lazy
exports of `mindprobe.lazy`), so `tests/core/test_architecture.py` can hold the code to the
order and forbid import loops, and `docs/architecture.md` is drawn from the code instead of by
hand. Regenerate the page with `python -m mindprobe.devtools.architecture docs/architecture.md`
(`--check` only compares).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = "mindprobe"
#: The layers, top to bottom: a module may import modules of its own unit (a package, or a
#: top-level module) and of any unit in a lower layer, nothing else. Units of one layer never
#: import each other. Each entry: (name, what it holds, its units).
LAYERS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("front doors", "what people and scripts start from: the `mindprobe` command, the package's "
     "lazy exports, the test doubles and these developer tools",
     ("cli.py", "__init__.py", "testing", "devtools")),
    ("commands and the library", "one module per command (argument handling and printing) "
     "and the Python API (`mindprobe.evaluate`, `load_run`, ...)", ("commands", "api.py")),
    ("benchmarks, profiles and trackers", "everything about one benchmark in its own package; "
     "a profile runs every benchmark at once; a run's results go to MLflow, W&B, Parquet or a "
     "Hugging Face dataset", ("benchmarks", "profiling", "tracking")),
    ("engine and resources", "a run's lifecycle (plan, start the model, run, store, analyse) "
     "and the shared services episodes use (dated Wikipedia)", ("engine", "resources")),
    ("backends and reports", "the model backends implementing the model protocol, and the "
     "report in every format", ("models", "report")),
    ("core", "the contracts (benchmark, model protocol, results) and the machinery under every "
     "run: sessions, runner, store, cache; knows no benchmark and no backend", ("core",)),
    ("registry", "which benchmarks exist (entry points, found by name: never imported here)",
     ("registry.py",)),
    ("foundation", "errors, the version and lazy exports: imported by every layer",
     ("errors.py", "version.py", "lazy.py")),
)


@dataclass
class Module:
    name: str
    path: Path
    is_package: bool
    #: Its layer's unit: its top-level package ("core"), or itself when it is a top-level
    #: module ("api.py"; the package's own `__init__` is "__init__.py").
    unit: str = ""
    #: The package's modules it imports (full names), wherever the import statement is.
    imports: set[str] = field(default_factory=set)
    #: The first sentence of its docstring, on one line.
    doc: str = ""


def src_root() -> Path:
    """The folder holding the `mindprobe` package (src/ in a checkout)."""
    return Path(__file__).resolve().parents[2]




def layer_of(unit: str) -> int:
    for i, (_, _, units) in enumerate(LAYERS):
        if unit in units:
            return i
    raise KeyError(f"{unit} is in no layer: add it to LAYERS in {__name__}")


def read_modules(root: Path | None = None) -> dict[str, Module]:
    """Every module of the package under `root` (default: this installation's source) with
    the package modules it imports."""
    root = root or src_root()
    mods: dict[str, Module] = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_package else parts)
        mods[name] = Module(name, path, is_package)
    for mod in mods.values():
        parts = mod.name.split(".")
        top = ".".join(parts[:2])
        mod.unit = ("__init__.py" if len(parts) == 1 else
                    parts[1] if mods[top].is_package else parts[1] + ".py")
        tree = ast.parse(mod.path.read_text())
        mod.imports = set(_imported(mod, tree, mods))
        mod.doc = _first_sentence(ast.get_docstring(tree) or "")
    return mods


def _first_sentence(text: str) -> str:
    first = " ".join(text.split("\n\n")[0].split())
    end = first.find(". ")
    return first if end < 0 else first[:end + 1]


def _imported(mod: Module, tree: ast.Module, mods: dict[str, Module]) -> Iterable[str]:
    """The package's modules `mod` imports: those it names, and the packages importing them
    runs first (importing `a.b.c` runs `a.b`) unless they are its own (already running)."""
    dicts = {t.id: node.value for node in tree.body if isinstance(node, ast.Assign)
             for t in node.targets if isinstance(t, ast.Name) and isinstance(node.value, ast.Dict)}
    here = mod.name if mod.is_package else mod.name.rpartition(".")[0]
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = here.split(".")[:len(here.split(".")) - (node.level - 1)]
                base = ".".join(pkg + ([node.module] if node.module else []))
            subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in mods]
            names = subs + ([base] if len(subs) < len(node.names) else [])
        elif isinstance(node, ast.Call) and _called(node) == "lazy_exports" and node.args:
            package = (mod.name if isinstance(node.args[0], ast.Name)  # lazy_exports(__name__, …)
                       else getattr(node.args[0], "value", ""))
            table = node.args[1] if len(node.args) > 1 else None
            table = dicts.get(table.id) if isinstance(table, ast.Name) else table
            if isinstance(table, ast.Dict):
                names = [f"{package}.{k.value}" for k in table.keys
                         if isinstance(k, ast.Constant)]
        for name in names:
            if name != PACKAGE and not name.startswith(PACKAGE + "."):
                continue
            while name not in mods:
                name = name.rpartition(".")[0]
            if name != mod.name:  # what it names, even its own package (its `__init__`)
                yield name
            parts = name.split(".")
            for i in range(1, len(parts)):  # packages run on the way, but not its own
                target = ".".join(parts[:i])
                if target in mods and not (mod.name + ".").startswith(target + "."):
                    yield target


def _called(call: ast.Call) -> str:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def layering_violations(mods: dict[str, Module]) -> list[str]:
    """Imports that go up a layer, or sideways into another unit of the same layer."""
    bad = []
    for mod in mods.values():
        unit = mod.unit
        for target in sorted(mod.imports):
            other = mods[target].unit
            if other != unit and layer_of(other) <= layer_of(unit):
                where = "up" if layer_of(other) < layer_of(unit) else "sideways"
                bad.append(f"{mod.name} ({unit}, layer {layer_of(unit) + 1}) imports {target} "
                           f"({other}, layer {layer_of(other) + 1}): {where}")
    return bad


def import_cycles(mods: dict[str, Module]) -> list[list[str]]:
    """Every set of modules that import each other round in a loop (Tarjan's strongly
    connected components, function-level imports included), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in mods[v].imports:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(mods)))
    try:
        for v in sorted(mods):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(found)


def _unit_edges(mods: dict[str, Module]) -> dict[str, dict[str, int]]:
    """unit -> {unit it imports: how many of its modules import that unit}."""
    out: dict[str, dict[str, int]] = {}
    for mod in mods.values():
        for other in {mods[t].unit for t in mod.imports} - {mod.unit}:
            out.setdefault(mod.unit, {})
            out[mod.unit][other] = out[mod.unit].get(other, 0) + 1
    return out


def _label(unit: str) -> str:
    return f"`{unit}`" if unit.endswith(".py") else f"`{unit}/`"


def render(mods: dict[str, Module]) -> str:
    """docs/architecture.md: the layers top to bottom, their modules, who imports whom."""
    edges = _unit_edges(mods)
    units = {u: [m for m in mods.values() if m.unit == u]
             for _, _, us in LAYERS for u in us}
    n_imports = sum(len(m.imports) for m in mods.values())
    out = [
        "# Architecture",
        "",
        "<!-- Generated by `python -m mindprobe.devtools.architecture docs/architecture.md` "
        "from the source's imports; do not edit by hand. -->",
        "",
        f"mindprobe's {len(mods)} modules stand in {len(LAYERS)} layers. A module imports "
        "modules of its own package and of lower layers only, never a higher layer nor "
        "another package of its own layer, and no modules import each other in a loop "
        "(imports inside functions included). `tests/core/test_architecture.py` holds the code "
        f"to this; the order is `LAYERS` in `mindprobe/devtools/architecture.py`. "
        f"{n_imports} imports between modules were read.",
        "",
        "## The layers, top to bottom",
        "",
        "| # | layer | packages and modules | modules | imports from lower layers |",
        "|---|---|---|---|---|",
    ]
    for i, (name, _, us) in enumerate(LAYERS):
        below = sorted({o for u in us for o in edges.get(u, {})}, key=_order)
        out.append(f"| {i + 1} | {name} | {', '.join(map(_label, us))} | "
                   f"{sum(len(units[u]) for u in us)} | {', '.join(map(_label, below)) or '–'} |")
    out += ["", "## Who imports whom", "",
            "Each row: a package or module, and the ones below it that it imports, with how "
            "many of its modules do.", "",
            "| package / module | layer | imports (modules importing) | imported by |",
            "|---|---|---|---|"]
    for _, _, us in LAYERS:
        for u in us:
            uses = ", ".join(f"{_label(o)} ({n})" for o, n in
                             sorted(edges.get(u, {}).items(), key=lambda kv: _order(kv[0])))
            users = ", ".join(_label(o) for o in sorted(
                (o for o, e in edges.items() if u in e), key=_order))
            out.append(f"| {_label(u)} | {layer_of(u) + 1} | {uses or '–'} | {users or '–'} |")
    for i, (name, what, us) in enumerate(LAYERS):
        out += ["", f"## {i + 1}. {name[0].upper() + name[1:]}", "", what[0].upper() + what[1:]
                + ".", ""]
        for u in us:
            out += [f"### {_label(u)}", "", "| module | what it is for |", "|---|---|"]
            for m in units[u]:
                kind = " (package)" if m.is_package and m.name != PACKAGE else ""
                out.append(f"| `{m.name}`{kind} | {m.doc.replace('|', '/') or '–'} |")
            out.append("")
        if out[-1] == "":
            out.pop()
    return "\n".join(out) + "\n"


def _order(unit: str) -> tuple[int, str]:
    return layer_of(unit), unit


def main(argv: list[str] | None = None) -> int:
    """`python -m mindprobe.devtools.architecture [--check] PATH`: write (or compare) the page."""
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    paths = [a for a in args if a != "--check"]
    if len(paths) != 1 or any(a.startswith("-") for a in paths):
        sys.stderr.write("usage: python -m mindprobe.devtools.architecture [--check] "
                         "docs/architecture.md\n")
        return 2
    path = Path(paths[0])
    text = render(read_modules())
    if check:
        same = path.is_file() and path.read_text() == text
        if not same:
            sys.stderr.write(f"{path} is stale: run python -m mindprobe.devtools.architecture "
                             f"{path}\n")
        return 0 if same else 1
    path.parent.mkdir(parents=True, exist_ok=True)
    from mindprobe.core.files import write_file

    write_file(path, text, replace=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
