"""A table's columns as lists, read straight from the rows a benchmark gave (`Table` made from
a list of dicts) when the rows say unambiguously what `pandas.DataFrame(rows)` would hold, so
showing a run's tables, or writing them to JSON, imports no pandas (~0.45 s, a third of a
small run). Otherwise (an index, mixed types, numpy integers...) the DataFrame is made and
read, as before; `tests/core/test_table_columns.py` holds both ways equal.

What pandas makes of a column of rows: whole numbers alone → int64; numbers with a float or a
missing value among them → float64 (the whole numbers become floats, a missing value NaN);
text, with or without missing values → text; True/False alone → bool; nothing but missing
values → object.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

_ABSENT = object()
_INT64 = (-(2 ** 63), 2 ** 63 - 1)


@dataclass(frozen=True)
class Columns:
    """Column names in order, each column's values and its numpy dtype kind (i, f, b, O)."""

    names: list[Any]
    values: dict[Any, list[Any]]
    kinds: dict[Any, str]


def columns_of(t: Any) -> Columns | None:
    """The columns of `t` (a `numbers.Table`, which imports this module) from its rows, or
    None where only pandas can say (the caller then reads `t.frame`)."""
    rows = t.__dict__.get("_frame")
    if not isinstance(rows, list) or not rows or t.by_row \
            or not all(type(r) is dict for r in rows):
        return None
    names = list(dict.fromkeys(k for r in rows for k in r))
    values: dict[Any, list[Any]] = {}
    kinds: dict[Any, str] = {}
    for name in names:
        got = _column([r.get(name, _ABSENT) for r in rows])
        if got is None:
            return None
        kinds[name], values[name] = got
    return Columns(names, values, kinds)


def _missing(v: Any) -> bool:
    return v is _ABSENT or v is None


def _column(col: list[Any]) -> tuple[str, list[Any]] | None:
    present = [v for v in col if not _missing(v)]
    if not present:
        # all None: an object column of None (absent keys alone cannot make a column)
        return ("O", [None] * len(col)) if all(v is None for v in col) else None
    missing = len(present) < len(col)
    if all(type(v) is bool for v in present):
        return None if missing else ("b", list(col))
    if all(type(v) is int for v in present):
        if not all(_INT64[0] <= v <= _INT64[1] for v in present):
            return None
        if not missing:
            return "i", list(col)
    if all(type(v) is int or isinstance(v, float) and type(v) is not bool for v in present):
        return "f", [math.nan if _missing(v) else float(v) for v in col]
    if all(type(v) is str for v in present):
        return "O", [None if _missing(v) else v for v in col]
    return None
