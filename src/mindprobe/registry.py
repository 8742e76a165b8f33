"""Which benchmarks exist: every entry point of the group `mindprobe.benchmarks`
(`name = "package.module:BenchmarkClass"`), the built-ins included (pyproject.toml).

`mindprobe list`, `run NAME --help` and variant checks need only what a benchmark class
declares (`name`, `title`, `variants`, `default_variant`, `Options`, ...). Where those are
plain literals in the class body they are read from the module's source without importing it
(nor pandas); otherwise the class is imported. The benchmark itself is imported only when a
command needs it. A plugin that cannot be read is one warning naming it, never a crash.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mindprobe.errors import UsageError, did_you_mean

GROUP = "mindprobe.benchmarks"
#: Class attributes a benchmark declares (those read without importing it).
_DECLARED = ("name", "title", "variants", "default_variant", "variant_groups", "verbs", "limit",
             "record_ranges")


@dataclass(frozen=True)
class BenchmarkInfo:
    name: str
    title: str
    #: variant name -> one-line description.
    variants: dict[str, str]
    default_variant: str
    #: "module:Class" of the Benchmark and of its Options dataclass.
    task: str
    options: str
    #: groups that run several variants, e.g. {"all": [...]}.
    variant_groups: dict[str, list[str]] = field(default_factory=dict)
    #: its own CLI verbs besides run/analyse/data -> one line of help (`mindprobe.core.verbs`).
    verbs: dict[str, str] = field(default_factory=dict)
    #: What `--limit N` keeps, in the words of this benchmark (shown in `run BENCH --help`).
    limit: str = "the first N items"
    #: The distribution it comes from ("mindprobe" for the built-ins).
    source: str = "mindprobe"
    #: Record field -> (lowest, highest) value it may hold (`Benchmark.record_ranges`).
    record_ranges: dict[str, tuple[float, float]] = field(default_factory=dict)


class _Registry(Mapping[str, BenchmarkInfo]):
    """name -> BenchmarkInfo, filled from the entry points on first use."""

    def __init__(self) -> None:
        self._found: dict[str, BenchmarkInfo] | None = None

    def _all(self) -> dict[str, BenchmarkInfo]:
        if self._found is None:
            self._found = _discover(_warn)
        return self._found

    def refresh(self) -> None:
        """Look for entry points again (after installing a plugin in this process)."""
        importlib.invalidate_caches()
        self._found = None

    def __getitem__(self, name: str) -> BenchmarkInfo:
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


BENCHMARKS = _Registry()


def _warn(message: str) -> None:
    sys.stderr.write(f"warning: {message}\n")


def _entry_points() -> list[tuple[str, str, str]]:
    """(name, "module:Class", distribution) of the group, the built-ins first in the order
    pyproject.toml lists them. A source checkout whose installed metadata predates the group
    (an editable install not re-installed) reads the built-ins from its pyproject.toml."""
    from importlib.metadata import entry_points

    found = [(ep.name, ep.value, ep.dist.name if ep.dist else "?")
             for ep in entry_points(group=GROUP)]
    own = [e for e in found if e[2] == "mindprobe"]
    if not own:
        own = [(n, v, "mindprobe") for n, v in _source_checkout_entries()]
    plugins = sorted(e for e in found if e[2] != "mindprobe")
    return own + plugins


def _source_checkout_entries() -> list[tuple[str, str]]:
    import tomllib

    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    try:
        doc = tomllib.loads(pyproject.read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return []
    if doc.get("project", {}).get("name") != "mindprobe":
        return []
    return list(doc["project"].get("entry-points", {}).get(GROUP, {}).items())


def _discover(warn: Any) -> dict[str, BenchmarkInfo]:
    out: dict[str, BenchmarkInfo] = {}
    for name, target, dist in _entry_points():
        where = f"benchmark plugin {name!r} ({target}, from {dist})"
        if name in out:
            warn(f"{where}: the name is taken by {out[name].task}; ignored")
            continue
        try:
            found = read_info(name, target, dist)
        except Exception as exc:  # a broken plugin must not break `mindprobe list`
            warn(f"{where} cannot be loaded: {type(exc).__name__}: {exc}")
            continue
        out[name] = found
    return out


def read_info(name: str, target: str, dist: str = "mindprobe") -> BenchmarkInfo:
    """What the class at `target` declares: from its source when the declarations are
    literals, else by importing it. Its `name` must be the entry point's."""
    module, _, attr = target.partition(":")
    if not attr:
        raise ValueError("expected 'package.module:BenchmarkClass'")
    declared = _declared_in_source(module, attr)
    if declared is None:
        declared = _declared_by_import(module, attr)
    if declared.get("name") != name:
        raise ValueError(f"the class says name = {declared.get('name')!r}")
    for key in ("title", "variants", "default_variant", "options"):
        if not declared.get(key):
            raise ValueError(f"the class declares no {key if key != 'options' else 'Options'}")
    variants = dict(declared["variants"])
    groups = {g: list(vs) for g, vs in dict(declared.get("variant_groups") or {}).items()}
    verbs = declared.get("verbs") or {}
    if not isinstance(verbs, dict) or not all(isinstance(v, str) for v in verbs.values()):
        raise ValueError("verbs must be a dict: verb name -> one line of help")
    if declared["default_variant"] not in variants:
        raise ValueError(f"default_variant {declared['default_variant']!r} is not a variant")
    return BenchmarkInfo(
        name=name, title=str(declared["title"]), variants=variants,
        default_variant=str(declared["default_variant"]), task=target,
        options=declared["options"], variant_groups=groups,
        verbs={str(k): v for k, v in verbs.items()},
        limit=str(declared.get("limit") or BenchmarkInfo.limit), source=dist,
        record_ranges={str(k): (float(lo), float(hi))
                       for k, (lo, hi) in dict(declared.get("record_ranges") or {}).items()})


def _declared_in_source(module: str, attr: str) -> dict[str, Any] | None:
    """The literal declarations of class `attr` in `module`'s source, or None when they are
    not all literals (or the source cannot be found) and the class must be imported."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == attr), None)
    if cls is None:
        return None
    out: dict[str, Any] = {}
    for stmt in cls.body:
        target, value = _assignment(stmt)
        if target in _DECLARED:
            try:
                out[target] = ast.literal_eval(value)
            except ValueError:
                return None
        elif target == "Options" and isinstance(value, ast.Name):
            where = _imported_from(tree, value.id, module, spec.parent or "")
            if where is None:
                return None
            out["options"] = where
    return out if {"name", "options"} <= set(out) else None


def _assignment(stmt: ast.stmt) -> tuple[str | None, Any]:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id, stmt.value
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value:
        return stmt.target.id, stmt.value
    return None, None


def _imported_from(tree: ast.Module, name: str, module: str, package: str) -> str | None:
    """"module:Name" where `name` comes from (a module-level import, or the module itself)."""
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    base = node.module or ""
                    if node.level:  # relative: from the module's package upwards
                        parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                        base = ".".join([*parts, *([base] if base else [])])
                    return f"{base}:{alias.name}"
        if isinstance(node, ast.ClassDef) and node.name == name:
            return f"{module}:{name}"
    return None


def _declared_by_import(module: str, attr: str) -> dict[str, Any]:
    cls = getattr(importlib.import_module(module), attr)
    out = {k: getattr(cls, k, None) for k in _DECLARED}
    opts = getattr(cls, "Options", None)
    out["options"] = f"{opts.__module__}:{opts.__qualname__}" if opts is not None else None
    return out


def benchmark_names() -> list[str]:
    return list(BENCHMARKS)


def info(name: str) -> BenchmarkInfo:
    """The registry entry; an unknown name gets the list of known ones."""
    found = BENCHMARKS.get(name)
    if found is None:
        raise UsageError(f"unknown benchmark {name!r}{did_you_mean(name, BENCHMARKS)} "
                         f"(known: {', '.join(BENCHMARKS)})")
    return found


def _load(target: str) -> Any:
    module, attr = target.split(":")
    return getattr(importlib.import_module(module), attr)


def options_class(name: str) -> type:
    """The benchmark's Options dataclass (a light module: no pandas)."""
    return _load(info(name).options)


def get_benchmark(name: str) -> Any:
    """Instantiate a registered benchmark (imports its code)."""
    return _load(info(name).task)()


def split_bench_spec(spec: str) -> tuple[str, str | None]:
    """`NAME:VARIANT` -> (NAME, VARIANT); a bare name -> (name, None)."""
    name, _, variant = spec.partition(":")
    return name, (variant or None)


def resolve_variants(bench: BenchmarkInfo, variant: str | None) -> list[str]:
    """A variant, a group of variants, or the default; unknown ones list what exists."""
    if variant is None:
        return [bench.default_variant]
    if variant in bench.variant_groups:
        return list(bench.variant_groups[variant])
    if variant in bench.variants:
        return [variant]
    known = ", ".join([*bench.variants, *bench.variant_groups])
    raise UsageError(f"unknown variant {variant!r} of {bench.name}; known: {known}")
