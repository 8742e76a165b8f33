"""Plots that explain a benchmark's tables: a generic bar chart for any table with a value
column (and CI columns), plus per-benchmark hooks.

`PLOT_HOOKS[benchmark](runs, results) -> [svg, ...]` receives the benchmark's runs and their
Results (same order; None where a run could not be analysed) and draws from the Results'
tables, or from per-item record fields the tables summarise (survival curves). `HOOK_COVERS`
names the tables a hook already draws, so the generic chart skips them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from mindprobe.core.results import Results, Table, _named_index
from mindprobe.core.store import Run
from mindprobe.report.svg import Line, Series, bar_chart, line_chart, ok

PlotHook = Callable[[Sequence[Run], Sequence[Results | None]], list[str]]
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


def _num(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def _frame(t: Table):
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
    frame = _frame(t)
    found = value_column(frame)
    if found is None:
        return None
    labels, value = found
    half, lo_c, hi_c = _ci_columns([str(c) for c in frame.columns], value)
    if labels:
        cats = [" · ".join(str(v) for v in row) for row in frame[labels].itertuples(index=False)]
    else:
        cats = ["all"]
    vals = [_num(x) for x in frame[value]]
    lows: list[float | None] = [None] * len(vals)
    highs: list[float | None] = [None] * len(vals)
    if half is not None:
        hw = [_num(x) for x in frame[half]]
        lows = [v - h if ok(v) and ok(h) else None for v, h in zip(vals, hw, strict=True)]
        highs = [v + h if ok(v) and ok(h) else None for v, h in zip(vals, hw, strict=True)]
    elif lo_c and hi_c:
        lows, highs = [_num(x) for x in frame[lo_c]], [_num(x) for x in frame[hi_c]]
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
    found = value_column(_frame(t))
    return found[1] if found else ""


def _align(cats: list[str], s: Series, all_cats: list[str]) -> Series:
    idx = {c: i for i, c in enumerate(cats)}

    def pick(seq):
        return [seq[idx[c]] if seq is not None and c in idx else None for c in all_cats]

    return Series(s.name, pick(s.values), pick(s.lows), pick(s.highs), s.color)


def _by_setting(runs: Sequence[Run], results: Sequence[Results | None]
                ) -> dict[str, list[tuple[Run, Results]]]:
    """Runs by variant (and prompting, where the runs use several)."""
    several = len({run.prompting for run in runs}) > 1
    out: dict[str, list[tuple[Run, Results]]] = {}
    for run, res in zip(runs, results, strict=True):
        if res is not None:
            key = run.variant + (f" · {run.prompting}" if several else "")
            out.setdefault(key, []).append((run, res))
    return out


# -- WorldSense -------------------------------------------------------------------------------
def worldsense_plots(runs: Sequence[Run], results: Sequence[Results | None]) -> list[str]:
    """Accuracy and bias by problem with 95% CIs (from each run's `accuracy/<run>` table);
    per-problem chance from the same table's `chance` column (the benchmark's own definition,
    the line the terminal and JSON show)."""
    out = []
    for setting, pairs in _by_setting(runs, results).items():
        cats: list[str] = []
        rows: list[tuple[Run, dict[str, dict[str, Any]]]] = []
        chance: dict[str, list[float]] = {}
        for run, res in pairs:
            t = next((t for n, t in res.tables.items() if n.startswith("accuracy/")), None)
            if t is None:
                continue
            frame = _frame(t)
            by = {str(r["problem"]): r for r in frame.to_dict("records")}
            cats += [c for c in by if c not in cats]
            rows.append((run, by))
            ref = next((t for n, t in res.tables.items() if n == "chance"), None)
            for row in (_frame(ref).to_dict("records") if ref is not None else []):
                if _num(row.get("chance")) is not None:
                    chance.setdefault(str(row["problem"]), []).append(float(row["chance"]))
        if not rows:
            continue
        per_problem = {p: sum(v) / len(v) for p, v in chance.items()}
        acc, bias = [], []
        for run, by in rows:
            m = run.model_label
            a = [_num(by.get(c, {}).get("accuracy")) for c in cats]
            acc.append(Series(m, a, [_num(by.get(c, {}).get("ci_low")) for c in cats],
                              [_num(by.get(c, {}).get("ci_high")) for c in cats], _colors(m)))
            b = [_num(by.get(c, {}).get("bias")) for c in cats]
            bh = [_num(by.get(c, {}).get("bias ±95")) for c in cats]
            bias.append(Series(m, b, _minus(b, bh), _plus(b, bh), _colors(m)))
        refs = [100 * per_problem[c] if c in per_problem else None for c in cats]
        out.append(bar_chart(cats, acc, title=f"WorldSense {setting}: accuracy by problem (95% CI)",
                             y_label="accuracy %", y_range=(0, 100), category_refs=refs,
                             category_ref_label="chance (uniform guess, paper's scoring)"))
        out.append(bar_chart(cats, bias, title=f"WorldSense {setting}: bias by problem (95% CI; "
                             "> 0 leans to TRUE/POSSIBLE/decidable)", y_label="bias",
                             y_range=(-1, 1)))
    return out


def _minus(a: list[float | None], h: list[float | None]) -> list[float | None]:
    return [x - y if ok(x) and ok(y) else None for x, y in zip(a, h, strict=True)]


def _plus(a: list[float | None], h: list[float | None]) -> list[float | None]:
    return [x + y if ok(x) and ok(y) else None for x, y in zip(a, h, strict=True)]


# -- Already Said That ------------------------------------------------------------------------
def survival(turns: Sequence[float], max_turns: int) -> tuple[list[float], list[float]]:
    """Share of chats still going at turn t (num_turns ≥ t), t = 0 … max_turns."""
    n = len(turns)
    xs = list(range(max_turns + 1))
    return [float(x) for x in xs], [sum(1 for v in turns if v >= t) / n for t in xs]


def already_said_that_plots(runs: Sequence[Run], results: Sequence[Results | None]) -> list[str]:
    """Survival curves per variant (models as lines) and turns survived per variant (bars)."""
    out = []
    settings = _by_setting(runs, results)
    models = list(dict.fromkeys(r.model_label for r in runs))
    variants = list(settings)
    bars = []
    for m in models:
        vals, lows, highs = [], [], []
        for v in variants:
            h = next((res.headline for run, res in settings[v] if run.model_label == m), None)
            vals.append(h.value if h else None)
            lows.append(h.ci_low if h else None)
            highs.append(h.ci_high if h else None)
        bars.append(Series(m, vals, lows, highs, _colors(m)))
    if any(ok(v) for s in bars for v in s.values):
        out.append(bar_chart(variants, bars, title="Already Said That: turns survived "
                             "(mean, 95% CI)", y_label="turns", x_label="distractor variant"))
    for v in variants:
        lines = []
        top = 0
        for run, _res in settings[v]:
            turns = [float(r["num_turns"]) for r in run.records
                     if "error" not in r and _num(r.get("num_turns")) is not None]
            if not turns:
                continue
            max_turns = int(run.manifest.get("config", {}).get("max_turns") or max(turns))
            top = max(top, max_turns)
            xs, ys = survival(turns, max_turns)
            lines.append(Line(f"{run.model_label} (n={len(turns)})", xs, ys,
                              _colors(run.model_label)))
        if lines:
            out.append(line_chart(lines, title=f"Already Said That {v}: share of chats still "
                                  "going at turn t", x_label="turn t", y_label="chats going",
                                  y_range=(0, 1), x_range=(0, top), step=True, percent=True))
    return out


# -- MR-GSM8K ---------------------------------------------------------------------------------
MR_METRICS = ("TPR", "TNR", "Step", "S+R", "MR-Score")


def mr_gsm8k_plots(runs: Sequence[Run], results: Sequence[Results | None]) -> list[str]:
    """TPR / TNR / Step / S+R (and MR-Score) per question type, models side by side (x100)."""
    out = []
    for setting, pairs in _by_setting(runs, results).items():
        per_scope: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        for run, res in pairs:
            t = res.tables.get("metrics")
            if t is None:
                continue
            for row in _frame(t).to_dict("records"):
                per_scope.setdefault(str(row.get("scope")), []).append((run.model_label, row))
        for scope, rows in per_scope.items():
            series = [Series(m, [_num(row.get(k)) for k in MR_METRICS], color=_colors(m))
                      for m, row in rows]
            n = rows[0][1].get("n")
            out.append(bar_chart(list(MR_METRICS), series, y_range=(0, 100), y_label="x100",
                                 title=f"MR-GSM8K {setting}: {scope} (n={n}); S+R n/a = "
                                 "not judged"))
    return out


# -- SORT and FanOutQA ----------------------------------------------------------------------------
def _bars_from(rows_by_series: dict[str, list[dict[str, Any]]], category: Any, value: str,
               scale: float) -> tuple[list[str], list[Series]]:
    """Grouped bars: one series per key, categories from `category(row)`, CIs from
    `<value>_ci_low/high` or `ci_low/ci_high`."""
    cats: list[str] = []
    for rows in rows_by_series.values():
        for r in rows:
            if category(r) not in cats:
                cats.append(category(r))
    series = []
    for name, rows in rows_by_series.items():
        by = {category(r): r for r in rows}

        def get(c: str, col: str, by: dict[str, dict[str, Any]] = by) -> float | None:
            v = _num(by[c].get(col)) if c in by else None
            return None if v is None else v * scale

        lo = f"{value}_ci_low" if any(f"{value}_ci_low" in r for r in rows) else "ci_low"
        hi = f"{value}_ci_high" if any(f"{value}_ci_high" in r for r in rows) else "ci_high"
        series.append(Series(name, [get(c, value) for c in cats], [get(c, lo) for c in cats],
                             [get(c, hi) for c in cats], color=_series_color(name)))
    return cats, series


def _series_color(name: str) -> str:
    """The model's colour for its first setting; another setting of the same model (e.g.
    no-context beside in-context) gets a colour of its own, so bars can be told apart."""
    model, _, setting = name.partition(" · ")
    seen = _SETTINGS.setdefault(model, [])
    if setting not in seen:
        seen.append(setting)
    return _colors(model) if seen.index(setting) == 0 else _colors(name)


_SETTINGS: dict[str, list[str]] = {}


def sort_plots(runs: Sequence[Run], results: Sequence[Results | None]) -> list[str]:
    """Accuracy by condition (excerpt × segment length) and by distance bin, one bar per model
    and context (in-context / no-context / retrieval: the paper's key contrast), chance 50%."""
    _SETTINGS.clear()
    by_cond: dict[str, list[dict[str, Any]]] = {}
    by_bin: dict[str, list[dict[str, Any]]] = {}
    for run, res in zip(runs, results, strict=True):
        if res is None:
            continue
        context = (run.manifest.get("config") or {}).get("condition", "?")
        key = f"{run.model_label} · {context}"
        for name, sink in (("by_condition", by_cond), ("distance_bin", by_bin)):
            t = res.tables.get(name)
            if t is not None:
                sink.setdefault(key, []).extend(_frame(t).to_dict("records"))
    out = []
    if by_cond:
        cats, series = _bars_from(by_cond, lambda r: f"{r['excerpt_length']}-{r['segment_length']}",
                                  "accuracy", 100.0)
        out.append(bar_chart(cats, series, y_range=(0, 100), y_label="accuracy %",
                             x_label="excerpt-segment length (words)", refs=[(50.0, "chance")],
                             title="SORT accuracy by condition, in-context vs no-context (95% CI)"))
    if by_bin:
        cats, series = _bars_from(by_bin, lambda r: f"{r['excerpt_length']}: {r['distance_bin']}",
                                  "accuracy", 100.0)
        out.append(bar_chart(cats, series, y_range=(0, 100), y_label="accuracy %",
                             x_label="excerpt length: distance bin (words)",
                             refs=[(50.0, "chance")],
                             title="SORT accuracy by distance between the segments (95% CI)"))
    return out


def fanoutqa_plots(runs: Sequence[Run], results: Sequence[Results | None]) -> list[str]:
    """Loose accuracy by fan-out width (number of evidence pages), one bar per model and
    setting, with CIs."""
    _SETTINGS.clear()
    rows: dict[str, list[dict[str, Any]]] = {}
    for run, res in zip(runs, results, strict=True):
        t = res.tables.get("by_fanout") if res is not None else None
        if t is not None:
            rows.setdefault(f"{run.model_label} · {run.variant}", []).extend(
                _frame(t).to_dict("records"))
    if not rows:
        return []
    cats, series = _bars_from(rows, lambda r: str(r.get("fanout")), "loose", 100.0)
    return [bar_chart(cats, series, y_range=(0, 100), y_label="loose accuracy %",
                      x_label="evidence pages per question (fan-out)",
                      title="FanOutQA loose accuracy by fan-out width (95% CI)")]


PLOT_HOOKS: dict[str, PlotHook] = {
    "worldsense": worldsense_plots,
    "already_said_that": already_said_that_plots,
    "mr_gsm8k": mr_gsm8k_plots,
    "sort": sort_plots,
    "fanoutqa": fanoutqa_plots,
}
#: Tables a hook already draws (exact names, or prefixes ending in "/").
HOOK_COVERS: dict[str, tuple[str, ...]] = {
    "worldsense": ("accuracy/",),
    "already_said_that": ("metrics", "all_variants", "tokens"),  # tokens: unlike rows
    "mr_gsm8k": ("metrics",),
    "sort": ("by_condition", "distance_bin"),
    "fanoutqa": ("by_fanout",),
}


def covered(benchmark: str, table: str) -> bool:
    return any(table == c or (c.endswith("/") and table.startswith(c)) or c == ""
               for c in HOOK_COVERS.get(benchmark, ()))


def plots_for(benchmark: str, runs: Sequence[Run], results: Sequence[Results | None]
              ) -> list[str]:
    """The hook's plots, then generic charts of the tables the hook does not cover."""
    out: list[str] = []
    hook = PLOT_HOOKS.get(benchmark)
    if hook is not None:
        out += hook(runs, results)
    out += generic_plots(runs, results, skip=lambda name: covered(benchmark, name))
    return out
