"""Lazy package exports (PEP 562): a benchmark package's Python API without importing pandas
or numpy until a name is used, so the CLI starts fast."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, modules: dict[str, list[str]]) -> Callable[[str], Any]:
    """A module `__getattr__` serving `name` from `package.<module>` on first use. The
    package also gets a `__dir__` that lists those names, so `dir()` and tab completion see
    the public API before any of it is imported."""
    where = {name: mod for mod, names in modules.items() for name in names}

    def __getattr__(name: str) -> Any:
        mod = where.get(name)
        if mod is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{mod}"), name)

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(where))

    if package in sys.modules:  # called from the package's own __init__, as intended
        sys.modules[package].__dir__ = __dir__  # type: ignore[method-assign]
    return __getattr__
