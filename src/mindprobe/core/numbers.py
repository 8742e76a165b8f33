"""The one number format every view of a table uses: terminal, Markdown, LaTeX and HTML.

A benchmark says how its columns read (`Table.percent`: shares shown ×100 with one decimal, as
the papers print accuracy; `Table.digits`: fixed decimals where its paper fixes them, e.g.
WorldSense's bias with 2); every other float column gets one number of decimals for the whole
column (four significant digits of its largest value), so 0.009487 never stands beside 0.00448
and 49.4 never beside 49.51. Intervals are one column, `[low, high]`, in the format of the
value. Headers use spaces, not underscores, so a narrow terminal wraps them between words.
JSON keeps the exact machine values; only the views are formatted.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mindprobe.core.table_columns import columns_of

if TYPE_CHECKING:
    import pandas as pd

MISSING = "–"
PERCENT_DIGITS = 1
SIGNIFICANT = 4


@dataclass
class Table:
    """A named DataFrame plus how to show it (title; columns formatted as percentages).

    `frame` may be given as its rows (a list of dicts): the DataFrame is made when the table
    is first read, so a table nobody shows (a dry run's estimate, read for its numbers) never
    imports pandas (a fifth of a warm profile plan's time)."""

    frame: pd.DataFrame
    title: str = ""
    percent: tuple[str, ...] = ()
    index: bool = True
    #: Shown as one `[low, high]` column named by the key (JSON keeps both columns).
    intervals: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: Fixed decimals for a column where the paper fixes them (see `decimals_for`).
    digits: dict[str, int] = field(default_factory=dict)
    #: Short headers (column -> abbreviation), explained in a legend under the table, so
    #: tables fit 80 columns without wrapping a header mid-word.
    short: dict[str, str] = field(default_factory=dict)
    #: Columns kept in JSON but not shown (redundant in a view, e.g. a count beside its share).
    hidden: tuple[str, ...] = ()
    #: The title says the table is in % (so the percent columns' headers carry no `%`).
    percent_in_title: bool = False
    #: Rows are metrics of different kinds (one per row): decimals are chosen per row.
    by_row: bool = False
    #: Decimals of a `by_row` table's row that is not all whole numbers, by its first cell
    #: (a mean turn count: 1).
    row_digits: dict[str, int] = field(default_factory=dict)
    #: The columns that say what a row *is* (problem, cell, setting; never the model or the
    #: interval method): trackers name a row's metrics by them alone, so names compare across
    #: runs and models. None: the named index, else the leading text columns.
    keys: tuple[str, ...] | None = None
    #: The table's name for trackers where its name carries the run's identity (a model
    #: label), e.g. `accuracy/basic` for `accuracy/basic/MODEL`. None: its name.
    tracked_as: str | None = None


def _made_frame(table: Table) -> pd.DataFrame:
    frame = table.__dict__["_frame"]
    if isinstance(frame, list):
        import pandas as pd

        frame = table.__dict__["_frame"] = pd.DataFrame(frame)
    return frame


def _set_frame(table: Table, frame: pd.DataFrame | list[dict[str, Any]]) -> None:
    table.__dict__["_frame"] = frame


# set after the dataclass is made, so its __init__, __eq__ and __repr__ go through it
Table.frame = property(_made_frame, _set_frame)  # type: ignore[assignment]


def plain(v: Any) -> Any:
    """A numpy scalar as the Python value it holds; NaN as None (how JSON and views show it)."""
    if hasattr(v, "item") and not isinstance(v, (list, dict, str)):
        with contextlib.suppress(ValueError, AttributeError):
            v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def decimals_for(values: Any) -> int:
    """Decimals that show the column's largest magnitude with four significant digits (at
    least 0, at most 6); the whole column then uses them."""
    mags = [abs(float(v)) for v in (plain(x) for x in values)
            if isinstance(v, float) and v != 0 and not math.isinf(v)]
    if not mags:
        return 2
    top = max(mags)
    return max(0, min(6, SIGNIFICANT - 1 - math.floor(math.log10(top))))


def number(v: Any, decimals: int | None = None, percent: bool = False) -> str:
    """One value: ×100 with one decimal for a share shown as percent; `decimals` for floats
    (four significant digits when not given); ints and text as they are; None/NaN as –."""
    v = plain(v)
    if v is None:
        return MISSING
    if isinstance(v, (bool, str)):
        return str(v)
    if percent and isinstance(v, (int, float)):
        return f"{100 * v:.{PERCENT_DIGITS if decimals is None else decimals}f}"
    if isinstance(v, int):
        return f"{v:,}" if abs(v) >= 100_000 else str(v)
    if isinstance(v, float):
        if decimals is None:
            decimals = decimals_for([v])
        return f"{v:,.{decimals}f}" if abs(v) >= 100_000 else f"{v:.{decimals}f}"
    return str(v)


def interval(lo: Any, hi: Any, decimals: int | None = None, percent: bool = False) -> str:
    """`[low, high]`, or – when either end is missing."""
    if plain(lo) is None or plain(hi) is None:
        return MISSING
    return f"[{number(lo, decimals, percent)}, {number(hi, decimals, percent)}]"


def header(name: Any, percent: bool = False, t: Table | None = None) -> str:
    """A column's header: its short form where the table gives one (see `legend`), spaces for
    underscores, and `%` unless the title already says the table is in %."""
    text = (t.short.get(str(name)) if t is not None else None) or str(name).replace("_", " ")
    return f"{text} %" if percent and not (t is not None and t.percent_in_title) else text


def legend(t: Table) -> str | None:
    """`POSS = POSSIBLE, IMP = IMPOSSIBLE`: what a table's abbreviated headers stand for."""
    cols = set(map(str, view(t)[0])) - set(t.hidden)
    used = {n: s for n, s in t.short.items() if n in cols}
    if not used:
        return None
    return "legend: " + ", ".join(f"{s} = {str(n).replace('_', ' ')}" for n, s in used.items())


def view(t: Table) -> tuple[list[Any], Callable[[Any], Any], Callable[[Any], str]]:
    """(column names, a column's values, its dtype kind) of a table as shown: from its rows
    where they say it (`table_columns`, no pandas), else from its DataFrame (a named index
    made columns)."""
    cols = columns_of(t)
    if cols is not None:
        return cols.names, cols.values.__getitem__, cols.kinds.__getitem__
    frame = _frame(t)
    return list(frame.columns), frame.__getitem__, lambda c: frame[c].dtype.kind


def display(t: Table) -> tuple[list[str], list[list[str]], list[bool]]:
    """(headers, rows of cells, right-aligned?) of a table as every view shows it."""
    names, column, kind_of = view(t)
    pairs = intervals(t, names)
    lows = {lo: (name, hi) for name, (lo, hi) in pairs.items()}
    highs = {hi for _, hi in pairs.values()}
    heads: list[str] = []
    columns: list[list[str]] = []
    numeric: list[bool] = []
    for col in names:
        if col in highs or col in t.hidden:
            continue
        if col in lows:
            name, hi = lows[col]
            pct = col in t.percent
            dec = t.digits.get(col, PERCENT_DIGITS if pct else decimals_for(
                [*column(col), *column(hi)]))
            heads.append(header(name, pct, t))
            columns.append([interval(a, b, dec, pct) for a, b in zip(column(col), column(hi),
                                                                     strict=True)])
            numeric.append(True)
            continue
        pct = col in t.percent
        kind = kind_of(col)
        dec = t.digits.get(col, PERCENT_DIGITS if pct else (
            decimals_for(column(col)) if kind in "fO" else None))
        heads.append(header(col, pct, t))
        columns.append([number(v, dec, pct) for v in column(col)])
        numeric.append(kind in "iuf")
    rows = [list(r) for r in zip(*columns, strict=True)] if columns else []
    if t.by_row:
        rows = _by_row(_frame(t), t, rows)
    return heads, rows, numeric


def intervals(t: Table, names: list[Any]) -> dict[str, tuple[str, str]]:
    """The table's interval columns: those it names, and every other `P_ci_low`/`P_ci_high`
    (or `ci_low`/`ci_high`) pair, shown as one `[low, high]` column `P CI` (`95% CI`)."""
    out = dict(t.intervals)
    named = {c for pair in out.values() for c in pair}
    cols = set(map(str, names))
    for col in names:
        col = str(col)
        if col in named or not col.endswith("ci_low"):
            continue
        hi = col[: -len("low")] + "high"
        if hi in cols and hi not in named:
            prefix = col[: -len("ci_low")].rstrip("_ ").replace("_", " ")
            out[f"{prefix} CI" if prefix else "95% CI"] = (col, hi)
    return out


def _by_row(frame: pd.DataFrame, t: Table, rows: list[list[str]]) -> list[list[str]]:
    """A table whose rows are different metrics: a row of whole numbers (counts, turns) shows
    no decimals, any other row its `row_digits` or two, the same across its columns."""
    shown = [c for c in frame.columns if c not in t.hidden]
    out = []
    for i, row in enumerate(rows):
        values = [plain(frame[c].iloc[i]) for c in shown]
        nums = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        whole = nums and all(float(v).is_integer() for v in nums)
        dec = 0 if whole else t.row_digits.get(str(row[0]) if row else "", 2)
        out.append([number(v, dec) if isinstance(v, (int, float)) and not isinstance(v, bool)
                    else cell for v, cell in zip(values, row, strict=True)])
    return out


def _frame(t: Table) -> pd.DataFrame:
    named = any(n is not None for n in t.frame.index.names)
    return t.frame.reset_index() if t.index and named else t.frame
