"""Lazy package exports (PEP 562): a benchmark package's Python API without importing pandas
or numpy until a name is used, so the CLI starts fast."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, modules: dict[str, list[str]]) -> Callable[[str], Any]:
    """A module `__getattr__` serving `name` from `package.<module>` on first use."""
    where = {name: mod for mod, names in modules.items() for name in names}

    def __getattr__(name: str) -> Any:
        mod = where.get(name)
        if mod is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{mod}"), name)

    return __getattr__
