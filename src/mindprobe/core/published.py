"""Published results (a paper's table, an upstream leaderboard, released response files) as
rows of data, read by each benchmark from upstream's pinned files, never typed into our source.

A row says what it was measured on (benchmark, split and data release, setting, metric and
its definition, judge) and cites its source as `owner/repo@commit:path`, never a path of the
machine that read it. Rows are levels to read a run against: `beside` keeps those of a run's
setting (labelled where the data differs), `standing` places the run among them. No paired
test is ever made with them (their items are not the run's).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mindprobe.core.results import Headline

#: What a run is, in the published rows' words: its setting keys plus `split` and `release`.
Coords = dict[str, str]


@dataclass
class PublishedRow:
    """One published number of one system under one setting."""

    benchmark: str
    system: str
    metric: str
    #: The number exactly as upstream prints it (its table's cell, its JSON's number).
    value: str
    #: What must equal a run's coordinates (`Benchmark.published_coords`) to stand beside it.
    setting: dict[str, str]
    split: str
    release: str
    definition: str
    #: `owner/repo@commit:path` of the file the number is read from.
    source: str
    judge: str | None = None
    #: What the value is in: "points" (×100), "fraction", "score".
    unit: str = ""
    #: value × scale is in the unit of a run's headline (a fraction where that is a percent).
    scale: float = 1.0
    #: Shown ×100 as a percent (the run's headline convention).
    percent: bool = False
    n: int | None = None
    #: 95% interval in the run's unit, when the source gives one (else the row is a point).
    ci: tuple[float, float] | None = None
    #: The benchmark's headline metric (the profile's column).
    headline: bool = False
    #: Upstream's grouping of its rows (e.g. "Open-Source Small").
    group: str = ""
    #: How the data differs from a run's own, said beside a run on other data.
    data_label: str = ""
    #: Short column label for narrow tables (default: the metric).
    label: str = ""
    #: The name a run's headline gives this metric, where it is not `metric`.
    run_metric: str = ""
    #: Made by mindprobe from upstream's released files (not a number upstream prints).
    computed: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def number(self) -> float:
        return float(self.value)

    @property
    def level(self) -> float:
        """The value in the unit of a run's headline."""
        return self.number * self.scale

    @property
    def interval(self) -> tuple[float, float]:
        return self.ci if self.ci is not None else (self.level, self.level)

    def setting_text(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.setting.items())

    def as_headline(self) -> Headline:
        lo, hi = self.ci if self.ci is not None else (None, None)
        return Headline(self.metric, self.level, lo, hi, n=self.n, percent=self.percent)

    def shown(self) -> str:
        """The value for a narrow table: upstream's text when short, else rounded (percent: ×100
        with one decimal; others three decimals)."""
        if len(self.value) <= 6:
            return self.value
        return f"{100 * self.level:.1f}" if self.percent else f"{self.number:.3f}"

    def as_json(self) -> dict[str, Any]:
        return {"benchmark": self.benchmark, "system": self.system, "metric": self.metric,
                "value": self.value, "number": self.number, "unit": self.unit,
                "setting": dict(self.setting), "split": self.split, "release": self.release,
                "definition": self.definition, "judge": self.judge, "source": self.source,
                "n": self.n, "ci": list(self.ci) if self.ci else None, "group": self.group,
                "headline": self.headline, "computed": self.computed, **self.extra}


def beside(rows: Iterable[PublishedRow], coords: Coords) -> list[tuple[PublishedRow, str]]:
    """The rows of a run's setting, each with the label of how its data differs ("" where it
    is the run's own split and release)."""
    out = []
    for row in rows:
        if any(coords.get(k) != v for k, v in row.setting.items()):
            continue
        same = (row.split, row.release) == (coords.get("split"), coords.get("release"))
        out.append((row, "" if same else row.data_label or f"{row.split} split, "
                    f"{row.release} release"))
    return out


def _level_text(row: PublishedRow) -> str:
    return f"{100 * row.level:.1f}%" if row.percent else f"{row.level:.3g}"


def standing(h: Headline, rows: Sequence[PublishedRow]) -> str | None:
    """Where a run's headline stands among published headline rows of its setting: its rank,
    the rows just above and below, and those whose interval overlaps the run's ("between X and
    Y; indistinguishable from Z at this n"). None without a value or rows."""
    if h.value is None or not rows:
        return None
    v = h.value
    ranked = sorted(rows, key=lambda r: -r.level)
    above = [r for r in ranked if r.level > v]
    below = [r for r in ranked if r.level <= v]
    parts = [f"rank {len(above) + 1} of {len(ranked) + 1} (with {len(ranked)} published "
             f"rows of this setting)"]
    if above and below:
        parts.append(f"between {above[-1].system} ({_level_text(above[-1])}) and "
                     f"{below[0].system} ({_level_text(below[0])})")
    elif above:
        parts.append(f"below every published row (lowest: {above[-1].system}, "
                     f"{_level_text(above[-1])})")
    else:
        parts.append(f"above every published row (highest: {below[0].system}, "
                     f"{_level_text(below[0])})")
    text = "; ".join(parts)
    if h.ci_low is None or h.ci_high is None:
        return text + "; the run has no interval, so no row is called indistinguishable"
    n = f"n={h.n:,}" if h.n else "this n"
    same = [r.system for r in ranked if r.interval[0] <= h.ci_high and r.interval[1] >= h.ci_low]
    if same:
        return text + f"; indistinguishable from {', '.join(same)} at {n} (their published " \
            "level lies within the run's 95% interval, or the intervals overlap)"
    return text + f"; no published row lies within the run's 95% interval at {n}"


def fit_tables(rows: Sequence[PublishedRow], width: int = 80) -> list[str]:
    """Plain-text tables of rows (one line per system, one column per metric), split into as
    many tables as it takes for each line to fit `width` columns."""
    systems = list(dict.fromkeys(r.system for r in rows))
    metrics = list(dict.fromkeys(r.label or r.metric for r in rows))
    cell = {(r.system, r.label or r.metric): r.shown() for r in rows}
    judges = {s: sorted({r.judge for r in rows if r.system == s and r.judge}) for s in systems}
    varied = len({tuple(j) for j in judges.values()}) > 1
    sys_w = min(max(len(s) for s in systems), 30)
    cols = [(m, max(len(m), *(len(cell.get((s, m), "–")) for s in systems))) for m in metrics]
    if varied:
        cols.append(("judge", max(5, *(len(", ".join(j)) for j in judges.values()))))
    groups: list[list[tuple[str, int]]] = [[]]
    used = sys_w
    for name, w in cols:
        if groups[-1] and used + 2 + w > width:
            groups.append([])
            used = sys_w
        groups[-1].append((name, w))
        used += 2 + w
    out = []
    for group in groups:
        lines = ["system".ljust(sys_w) + "".join("  " + n.rjust(w) for n, w in group)]
        lines.append("-" * (sys_w + sum(2 + w for _, w in group)))
        for s in systems:
            name = s if len(s) <= sys_w else s[:sys_w - 1] + "…"
            vals = [(", ".join(judges[s]) or "–") if n == "judge" and varied
                    else cell.get((s, n), "–") for n, _ in group]
            lines.append(name.ljust(sys_w) + "".join(f"  {v:>{w}}" for v, (_, w)
                                                     in zip(vals, group, strict=True)))
        out.append("\n".join(lines))
    return out


def by_setting(rows: Iterable[PublishedRow]) -> dict[str, list[PublishedRow]]:
    """Rows grouped by their setting text, in the order met."""
    out: dict[str, list[PublishedRow]] = {}
    for r in rows:
        out.setdefault(r.setting_text(), []).append(r)
    return out


def pinned_file(benchmark: str, files: Sequence[Any], relpath: str,
                dirs: Sequence[Path | None]) -> Path:
    """The verified copy of a pinned file in the first of these data folders that holds one
    (None: the data cache); a copy that fails its hash is an error, none a DataError saying
    how to fetch it."""
    from mindprobe.core.data import data_dir_for, resolve

    folders = list(dict.fromkeys(dirs)) or [None]
    found = next((d for d in folders if (data_dir_for(benchmark, d) / relpath).is_file()),
                 folders[0])
    return resolve(benchmark, list(files), relpath, found)
