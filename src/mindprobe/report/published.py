"""Published rows beside the report's runs: for each setting a benchmark's runs were made in,
the rows of that setting (every metric), labelled where their data is not the run's, and where
each run stands among them. Levels only: no paired test is ever made with published rows.
Knows no benchmark: what a run is in the rows' words comes from `Benchmark.published_coords`."""

from __future__ import annotations

import pandas as pd

from mindprobe.core.published import PublishedRow, beside, standing
from mindprobe.core.results import Results
from mindprobe.report.collect import ReportData, RunEntry


def coords_of(e: RunEntry) -> dict[str, str] | None:
    """The run in its published rows' words (None: unknown benchmark or unreadable plan)."""
    from mindprobe.errors import MindprobeError
    from mindprobe.registry import BENCHMARKS, get_benchmark

    if e.benchmark not in BENCHMARKS:
        return None
    try:
        return get_benchmark(e.benchmark).published_coords(e.run.variant, e.run.plan())
    except (MindprobeError, AttributeError, KeyError):
        return None


def _scored(data: ReportData, bench: str) -> list[RunEntry]:
    return [e for e in data.of(bench) if e.results is not None and not e.error
            and not e.failed() and e.results.headline is not None]


def rows_beside(data: ReportData, e: RunEntry) -> list[tuple[PublishedRow, str]]:
    coords = coords_of(e)
    return beside(data.references.get(e.benchmark, []), coords) if coords else []


def where_you_stand(data: ReportData, e: RunEntry) -> str | None:
    """`rank r of n; between X and Y; indistinguishable from Z at n=…` for a run's headline
    among the published headline rows of its setting."""
    pairs = [(r, lab) for r, lab in rows_beside(data, e) if r.headline]
    if e.results is None or e.results.headline is None or not pairs:
        return None
    h = e.results.headline
    text = standing(h, [r for r, _ in pairs])
    row = pairs[0][0]
    if text and h.name not in (row.metric, row.run_metric):
        text += f" (the run's {h.name} read against the published {row.metric})"
    labels = sorted({lab for _, lab in pairs if lab})
    if text and labels:
        text += f" (published rows on other data: {'; '.join(labels)}; levels only)"
    return text


def _table(pairs: list[tuple[PublishedRow, str]]) -> pd.DataFrame:
    """One line per system, one column per metric (the value as upstream prints it, or
    rounded ×100 where upstream prints many digits), the judge where it varies."""
    systems = list(dict.fromkeys(r.system for r, _ in pairs))
    out = []
    for s in systems:
        mine = [(r, lab) for r, lab in pairs if r.system == s]
        line: dict[str, str] = {"system": s}
        if any(r.group for r, _ in mine):
            line["group"] = mine[0][0].group
        for r, _ in mine:
            line[r.label or r.metric] = r.shown()
        judges = sorted({r.judge for r, _ in mine if r.judge})
        line["judge"] = ", ".join(judges) or "–"
        out.append(line)
    frame = pd.DataFrame(out)
    if frame["judge"].nunique() <= 1:
        frame = frame.drop(columns="judge")
    return frame


def not_run_rows(data: ReportData, bench: str) -> list[tuple[PublishedRow, str]]:
    """The published rows of the setting a benchmark that did not run was planned in (its
    first setting's where the plan could not say)."""
    from mindprobe.core.published import by_setting

    rows = data.references.get(bench, [])
    coords = data.not_run[bench].coords if bench in data.not_run else None
    if coords:
        return beside(rows, coords)
    first = next(iter(by_setting(rows).values()), [])
    return [(r, "") for r in first]


def published_sections(data: ReportData, bench: str) -> list[tuple[str, Results]]:
    """(title, Results) per setting the benchmark's runs were made in; one note-only Results
    where no published row can stand beside them (none upstream, or not fetched)."""
    entries = _scored(data, bench)
    rows = data.references.get(bench, [])
    if not entries and bench in data.not_run:
        return _not_run_section(data, bench)
    if not rows:
        why = data.no_published.get(bench)
        if not why or not entries:
            return []
        res = Results(bench)
        res.notes.append(why)
        return [(f"{bench}: published results", res)]
    groups: dict[str, tuple[list[tuple[PublishedRow, str]], list[RunEntry]]] = {}
    for e in entries:
        pairs = rows_beside(data, e)
        key = "; ".join(sorted({r.setting_text() for r, _ in pairs}))
        if pairs:
            groups.setdefault(key, (pairs, []))[1].append(e)
    out = []
    for key, (pairs, runs) in groups.items():
        res = Results(bench)
        labels = sorted({lab for _, lab in pairs if lab})
        on = f" — on other data: {'; '.join(labels)}" if labels else ""
        res.add_table("published", _table(pairs), f"published results, {key}{on} (levels "
                      "beside the runs, never paired)", index=False)
        if labels:
            res.notes.append(f"These rows were measured on other data than the runs ("
                             f"{'; '.join(labels)}): comparable as levels only, never item by "
                             "item.")
        for e in runs:
            text = where_you_stand(data, e)
            if text:
                res.notes.append(f"Where you stand — {e.title}: {e.results.headline.text()}: "
                                 f"{text}.")
        defs = {(r.label or r.metric): r.definition for r, _ in pairs}
        res.notes += [f"{k}: {v}" for k, v in defs.items() if v and v != k]
        judges = sorted({f"{r.metric}: {r.judge}" for r, _ in pairs if r.judge})
        if judges:
            res.notes.append("judges: " + "; ".join(dict.fromkeys(judges)))
        sources = list(dict.fromkeys(r.source for r, _ in pairs))
        computed = any(r.computed for r, _ in pairs)
        res.notes.append(("computed by mindprobe from upstream's released files: " if computed
                          else "source: ") + ", ".join(sources))
        out.append((f"{bench}: published results ({key})", res))
    return out


def _not_run_section(data: ReportData, bench: str) -> list[tuple[str, Results]]:
    """A planned benchmark that did not run: why and its fix, then its published rows."""
    res = Results(bench)
    res.notes.append(f"Not run in this profile: {data.not_run[bench].text()}")
    pairs = not_run_rows(data, bench)
    if not pairs:
        why = data.no_published.get(bench)
        res.notes += [why] if why else []
        return [(f"{bench}: not run", res)]
    key = "; ".join(sorted({r.setting_text() for r, _ in pairs}))
    res.add_table("published", _table(pairs), f"published results, {key} (the setting the "
                  "profile planned)", index=False)
    sources = list(dict.fromkeys(r.source for r, _ in pairs))
    res.notes.append("source: " + ", ".join(sources))
    return [(f"{bench}: not run; published results ({key})", res)]
