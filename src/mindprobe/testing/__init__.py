"""Test doubles that exercise mindprobe's real HTTP path: an OpenAI-compatible local server."""

from __future__ import annotations

from typing import Any

__all__ = ["ServerConfig", "TestServer", "server_group"]


def __getattr__(name: str) -> Any:
    # Imported lazily so `python -m mindprobe.testing.server` does not import the module twice.
    if name in __all__:
        from mindprobe.testing import server

        return getattr(server, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
