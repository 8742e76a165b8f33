"""Plots that explain a benchmark's tables: a generic bar chart for any table with a value
column (and CI columns), after the benchmark's own plots (`Benchmark.plots`, drawn with the
helpers here and `report.svg`), which say which tables they already draw
(`Benchmark.plotted_tables`), so the generic chart skips those.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from mindprobe.core.results import Results, Table, _named_index
from mindprobe.core.store import Run
from mindprobe.report.svg import Series, bar_chart, ok

Colors = Callable[[str], str]

VALUE_NAMES = ("value", "accuracy", "mean", "score", "MR-Score", "mr_score", "rate", "f1",
               "rouge", "acc")
COUNT_NAMES = {"n", "count", "correct", "wrong", "unparsed", "verdicts", "pending", "samples",
               "n_samples", "tokens", "requests", "errors"}
_colors: Colors = lambda m: "#777"  # noqa: E731 - replaced by render() for the page


def set_colors(colors: Colors) -> None:
    """The page's model -> colour map (so a model has one colour in every chart)."""
    global _colors
    _colors = colors


def color(model: str) -> str:
    """The model's colour on this page."""
    return _colors(model)


def num(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def frame_of(t: Table) -> Any:
    """The table's frame with its named index as columns."""
    return t.frame.reset_index() if t.index and _named_index(t.frame) else t.frame


def _ci_columns(cols: Sequence[str], value: str) -> tuple[str | None, str | None, str | None]:
    """(half-width column, low column, high column) belonging to `value`, where present."""
    half = next((c for c in (f"{value} ±95", f"{value} ±", f"{value}_ci95", f"{value}_conf95")
                 if c in cols), None)
    if half is None and value in ("value", "mean", "accuracy"):
        half = next((c for c in ("±95", "ci95", "conf95") if c in cols), None)
    lo = next((c for c in (f"{value}_low", f"{value}_lo", f"{value} low") if c in cols), None)
    hi = next((c for c in (f"{value}_high", f"{value}_hi", f"{value} high") if c in cols), None)
    if lo is None and "ci_low" in cols and "ci_high" in cols:
        lo, hi = "ci_low", "ci_high"
    return half, lo, hi


def _is_ci(c: str) -> bool:
    return "±" in c or c.endswith(("_low", "_high", "_lo", "_hi")) or c in ("ci_low", "ci_high")


def value_column(frame) -> tuple[list[str], str] | None:
    """(label columns, value column) of a table a bar chart can show, or None.

    The value is a column named like a score (`VALUE_NAMES`), else the one numeric column that
    is neither a count nor a CI bound. Labels are the fewest leading key columns (text, or
    integers that are not counts) that tell the rows apart; a one-row table needs none.
    """
    if not 1 <= len(frame) <= 40:
        return None
    cols = [str(c) for c in frame.columns]
    kinds = {str(c): frame[c].dtype.kind for c in frame.columns}
    numeric = [c for c in cols if kinds[c] in "iuf"]
    value = next((c for c in VALUE_NAMES if c in numeric), None)
    if value is None:
        plain = [c for c in numeric if c.lower() not in COUNT_NAMES and not _is_ci(c)]
        if len(plain) != 1:
            return None
        value = plain[0]
    keys: list[str] = []
    for c in cols:
        if c == value or c.lower() in COUNT_NAMES or kinds[c] not in "OSUbiu" or _is_ci(c):
            break
        keys.append(c)
    for n in range(1, len(keys) + 1):
        if not frame.duplicated(subset=list(frame.columns[:n])).any():
            return keys[:n], value
    if len(frame) == 1:
        return [], value
    return None


def table_series(t: Table, model: str) -> tuple[list[str], Series, bool] | None:
    """A table as (categories, one series, percent axis), or None when it has no value column."""
    frame = frame_of(t)
    found = value_column(frame)
    if found is None:
        return None
    labels, value = found
    half, lo_c, hi_c = _ci_columns([str(c) for c in frame.columns], value)
    if labels:
        cats = [" · ".join(str(v) for v in row) for row in frame[labels].itertuples(index=False)]
    else:
        cats = ["all"]
    vals = [num(x) for x in frame[value]]
    lows: list[float | None] = [None] * len(vals)
    highs: list[float | None] = [None] * len(vals)
    if half is not None:
        hw = [num(x) for x in frame[half]]
        lows = [v - h if ok(v) and ok(h) else None for v, h in zip(vals, hw, strict=True)]
        highs = [v + h if ok(v) and ok(h) else None for v, h in zip(vals, hw, strict=True)]
    elif lo_c and hi_c:
        lows, highs = [num(x) for x in frame[lo_c]], [num(x) for x in frame[hi_c]]
    if not any(ok(v) for v in vals):
        return None
    return cats, Series(model, vals, lows, highs, _colors(model)), value in t.percent


def generic_plots(runs: Sequence[Run], results: Sequence[Results | None],
                  skip: Callable[[str], bool] = lambda name: False) -> list[str]:
    """One grouped bar chart per table name (models as series) for tables with a value
    column; tables of one run only get a single series."""
    groups: dict[str, list[tuple[str, Table]]] = {}
    for run, res in zip(runs, results, strict=True):
        if res is None:
            continue
        for name, t in res.tables.items():
            if not skip(name):
                groups.setdefault(f"{run.variant}\0{name}", []).append((run.model_label, t))
    out = []
    for key, tables in groups.items():
        variant, name = key.split("\0")
        cats: list[str] = []
        series: list[tuple[list[str], Series]] = []
        percent = False
        for model, t in tables:
            got = table_series(t, model)
            if got is None:
                continue
            c, s, percent = got
            cats += [x for x in c if x not in cats]
            series.append((c, s))
        if not series:
            continue
        aligned = [_align(c, s, cats) for c, s in series]
        title = tables[0][1].title or name
        out.append(bar_chart(cats, aligned, title=f"{title} ({variant})", percent=percent,
                             y_label=_value_name(tables[0][1])))
    return out


def _value_name(t: Table) -> str:
    found = value_column(frame_of(t))
    return found[1] if found else ""


def _align(cats: list[str], s: Series, all_cats: list[str]) -> Series:
    idx = {c: i for i, c in enumerate(cats)}

    def pick(seq):
        return [seq[idx[c]] if seq is not None and c in idx else None for c in all_cats]

    return Series(s.name, pick(s.values), pick(s.lows), pick(s.highs), s.color)


def by_setting(runs: Sequence[Run], results: Sequence[Results | None]
                ) -> dict[str, list[tuple[Run, Results]]]:
    """Runs by variant (and prompting, where the runs use several)."""
    several = len({run.prompting for run in runs}) > 1
    out: dict[str, list[tuple[Run, Results]]] = {}
    for run, res in zip(runs, results, strict=True):
        if res is not None:
            key = run.variant + (f" · {run.prompting}" if several else "")
            out.setdefault(key, []).append((run, res))
    return out


def minus(a: list[float | None], h: list[float | None]) -> list[float | None]:
    """a - h elementwise (None where either is missing): a CI's lower ends."""
    return [x - y if ok(x) and ok(y) else None for x, y in zip(a, h, strict=True)]


def plus(a: list[float | None], h: list[float | None]) -> list[float | None]:
    """a + h elementwise (None where either is missing): a CI's upper ends."""
    return [x + y if ok(x) and ok(y) else None for x, y in zip(a, h, strict=True)]


def survival(turns: Sequence[float], max_turns: int) -> tuple[list[float], list[float]]:
    """Share of items still going at step t (value ≥ t), t = 0 … max_turns."""
    n = len(turns)
    xs = list(range(max_turns + 1))
    return [float(x) for x in xs], [sum(1 for v in turns if v >= t) / n for t in xs]


def bars_from(rows_by_series: dict[str, list[dict[str, Any]]], category: Any, value: str,
              scale: float, settings: dict[str, list[str]] | None = None
              ) -> tuple[list[str], list[Series]]:
    """Grouped bars: one series per key ("model · setting"), categories from `category(row)`,
    CIs from `<value>_ci_low/high` or `ci_low/ci_high`. `settings` (model -> its settings
    seen) keeps a series' colour the same across the charts that share it."""
    settings = {} if settings is None else settings
    cats: list[str] = []
    for rows in rows_by_series.values():
        for r in rows:
            if category(r) not in cats:
                cats.append(category(r))
    series = []
    for name, rows in rows_by_series.items():
        by = {category(r): r for r in rows}

        def get(c: str, col: str, by: dict[str, dict[str, Any]] = by) -> float | None:
            v = num(by[c].get(col)) if c in by else None
            return None if v is None else v * scale

        lo = f"{value}_ci_low" if any(f"{value}_ci_low" in r for r in rows) else "ci_low"
        hi = f"{value}_ci_high" if any(f"{value}_ci_high" in r for r in rows) else "ci_high"
        series.append(Series(name, [get(c, value) for c in cats], [get(c, lo) for c in cats],
                             [get(c, hi) for c in cats], color=series_color(name, settings)))
    return cats, series


def series_color(name: str, settings: dict[str, list[str]]) -> str:
    """The model's colour for its first setting; another setting of the same model (e.g.
    no-context beside in-context) gets a colour of its own, so bars can be told apart."""
    model, _, setting = name.partition(" · ")
    seen = settings.setdefault(model, [])
    if setting not in seen:
        seen.append(setting)
    return _colors(model) if seen.index(setting) == 0 else _colors(name)


def covered(tables: Sequence[str], table: str) -> bool:
    """Whether `table` is one of `tables` (exact names, or prefixes ending in "/")."""
    return any(table == c or (c.endswith("/") and table.startswith(c)) or c == ""
               for c in tables)


def plots_for(benchmark: str, runs: Sequence[Run], results: Sequence[Results | None]
              ) -> list[str]:
    """The benchmark's own plots (`Benchmark.plots`), then generic charts of the tables they
    do not cover (`Benchmark.plotted_tables`)."""
    from mindprobe.registry import BENCHMARKS, get_benchmark

    bench = get_benchmark(benchmark) if benchmark in BENCHMARKS else None
    out: list[str] = bench.plots(runs, results) if bench is not None else []
    own = bench.plotted_tables if bench is not None else ()
    return out + generic_plots(runs, results, skip=lambda name: covered(own, name))
