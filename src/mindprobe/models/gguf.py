"""What a GGUF file says about its model, read from its header without loading it: the
metadata key-value pairs (`general.architecture`, `<arch>.context_length`, ...). The window a
model was trained for bounds the context a run may use, known before the engine starts."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from mindprobe.errors import DataError

MAGIC = b"GGUF"
#: Fixed-size value types of the GGUF format (type id -> struct format).
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
            10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
#: No honest header has more pairs or longer strings; past these the file is not a GGUF.
_MAX_PAIRS, _MAX_STRING = 1_000_000, 1 << 30


def _read(f: BinaryIO, n: int) -> bytes:
    data = f.read(n)
    if len(data) != n:
        raise ValueError("the file ends inside its header")
    return data


def _unpack(f: BinaryIO, fmt: str) -> Any:
    return struct.unpack(fmt, _read(f, struct.calcsize(fmt)))[0]


def _string(f: BinaryIO) -> str:
    n = _unpack(f, "<Q")
    if n > _MAX_STRING:
        raise ValueError(f"a string of {n} bytes")
    return _read(f, n).decode("utf-8", "replace")


def _value(f: BinaryIO, kind: int) -> Any:
    """A value of type `kind`; arrays are skipped (None)."""
    if kind in _SCALARS:
        return _unpack(f, _SCALARS[kind])
    if kind == _STRING:
        return _string(f)
    if kind == _ARRAY:
        inner, count = _unpack(f, "<I"), _unpack(f, "<Q")
        if inner in _SCALARS:  # skip without reading item by item
            f.seek(struct.calcsize(_SCALARS[inner]) * count, 1)
        else:
            for _ in range(count):
                _value(f, inner)
        return None
    raise ValueError(f"unknown value type {kind}")


def _pairs(f: BinaryIO, path: Path) -> Iterator[tuple[str, Any]]:
    """The header's (key, value) pairs in file order; arrays come as None (skipped)."""
    if f.read(4) != MAGIC:
        raise DataError(f"{path} is not a GGUF file (no GGUF magic at its start)")
    version = _unpack(f, "<I")
    if version < 2:
        raise DataError(f"{path}: GGUF version {version} is too old to read (v2+)")
    _unpack(f, "<Q")  # tensor count
    pairs = _unpack(f, "<Q")
    if pairs > _MAX_PAIRS:
        raise ValueError(f"{pairs} metadata pairs")
    for _ in range(pairs):
        key = _string(f)
        yield key, _value(f, _unpack(f, "<I"))


def metadata(path: Path) -> dict[str, Any]:
    """The header's scalar and string metadata (arrays, e.g. the vocabulary, left out)."""
    try:
        with open(path, "rb") as f:
            return {k: v for k, v in _pairs(f, path) if v is not None}
    except (ValueError, struct.error, OSError) as exc:
        raise DataError(f"cannot read the GGUF header of {path}: {exc}") from None


def trained_context(path: Path) -> int | None:
    """`<architecture>.context_length`: the window the model was trained for (None: unstated).
    Read up to that key only (writers put it before the vocabulary's long arrays)."""
    arch = None
    try:
        with open(path, "rb") as f:
            for key, value in _pairs(f, path):
                if key == "general.architecture" and isinstance(value, str):
                    arch = value
                elif arch is not None and key == f"{arch}.context_length":
                    return value if isinstance(value, int) and value > 0 else None
    except (ValueError, struct.error, OSError) as exc:
        raise DataError(f"cannot read the GGUF header of {path}: {exc}") from None
    return None
