"""The report page: one self-contained HTML file (inline CSS, JS and SVG; no request leaves
the page), readable on screen and on paper.

Sections: the cognitive profile, one section per benchmark (plots, then every run's Results
tables, notes and warnings), paired comparisons, transcripts, provenance; and the Results as
JSON in a data block, for scripts that want the numbers behind the page.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Sequence
from html import escape
from typing import Any

from mindprobe.core.results import Results
from mindprobe.report import plots, profile, transcripts
from mindprobe.report.assets import CSS, JS
from mindprobe.report.collect import ReportData, RunEntry, across_runs_of, combined_of
from mindprobe.report.compare import Comparison, blank_reason, comparisons_html
from mindprobe.report.provenance import Price, provenance_html, usage_by_role
from mindprobe.report.published import published_sections
from mindprobe.report.tables import table_html
from mindprobe.version import __version__

#: Benchmarks with more runs than this show each run folded (title and headline).
OPEN_RUNS = 4

def _clean(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {str(k): _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    return v


def data_json(data: ReportData, comparisons: list[Comparison], price: Price | None) -> str:
    """The numbers behind the page, safe to inline in a <script type=application/json>."""
    doc = {
        "generator": f"mindprobe {__version__}",
        "runs": [{
            "dir": str(e.run.dir), "slug": e.slug, "benchmark": e.benchmark,
            "variant": e.run.variant, "prompting": e.run.prompting, "model": e.model,
            "status": e.run.status, "state": e.run.state.as_dict(), "partial": e.partial(),
            "n_records": len(e.run.records),
            "n_items": e.n_items, "error": e.error,
            "results": e.results.to_json() if e.results is not None else None,
            "usage": usage_by_role(e),
            "cost_usd": None if price is None else sum(price.cost(u)
                                                      for u in usage_by_role(e).values()),
        } for e in data.entries],
        "extra": {name: res.to_json() for name, res in data.extra.items()},
        "published": {b: [r.as_json() for r in rows] for b, rows in data.references.items()},
        "comparisons": [{
            "benchmark": c.a.benchmark, "variant": c.a.run.variant, "a": c.a.slug,
            "b": c.b.slug, "score": c.score_name, "n": c.n, "mean_a": c.mean_a,
            "mean_b": c.mean_b, "diff": c.diff, "ci": list(c.ci) if c.ci else None,
            "mcnemar_p_exact": c.p_exact, "mcnemar_chi2": c.chi2, "mcnemar_p_chi2": c.p_chi2,
            "n_disagree": c.n_disagree, "blank": blank_reason(c) or None,
        } for c in comparisons],
    }
    text = json.dumps(_clean(doc), ensure_ascii=False, default=str, allow_nan=False)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def _figs(svgs: list[str], small: bool = False) -> str:
    if not svgs:
        return ""
    cls = "figs small" if small else "figs"
    return f'<div class="{cls}">' + "".join(f"<figure>{s}</figure>" for s in svgs) + "</div>"


def results_html(res: Results, key: str) -> str:
    """A Results: headline, every table, notes and warnings (what the terminal shows)."""
    parts = []
    if res.failed is not None:
        parts.append(f'<p class="headline error"><b>{escape(res.failed_text() or "")}</b></p>')
    if res.headline is not None:
        h = res.headline
        extra = []
        if h.n is not None:
            extra.append(f"n = {h.n:,}")
        if h.ci_method:
            extra.append(f"CI: {h.ci_method}")
        if h.chance is not None:
            extra.append(f"chance {h.chance_text()}")
        parts.append(f'<p class="headline"><b>{escape(profile.headline_cell(h))}</b> '
                     f"{escape(h.name)} <span class=\"muted\">{escape(' · '.join(extra))}"
                     "</span></p>")
    for name, t in res.tables.items():
        parts.append(table_html(t, f"{key}/{name}"))
    if res.invalid_text():
        parts.append(f'<p class="note">{escape(res.invalid_text() or "")}</p>')
    parts += [f'<p class="note">{escape(n)}</p>' for n in res.notes]
    parts += [f'<p class="warning">warning: {escape(w)}</p>' for w in res.warnings]
    return "".join(parts)


def _run_html(e: RunEntry, open_: bool) -> str:
    """A run's block, folded to its title and headline when the benchmark has many runs."""
    status = e.partial()
    badge = f' <span class="badge warn">partial: {escape(status)}</span>' if status else ""
    if e.failed():
        badge = f' <span class="badge err">failed: {escape(e.failed() or "")} — not scored</span>'
    head_line = ""
    if e.results is not None and e.results.headline is not None and not e.failed():
        head_line = f' <span class="hl">{escape(profile.headline_cell(e.results.headline))}</span>'
    summary = (f'<summary><h3 id="run-{e.slug}">{escape(e.title)}{head_line}{badge} '
               f"<small>{escape(str(e.run.dir))}</small></h3></summary>")
    if e.error or e.failed():
        body = f'<p class="error">{escape(e.error or e.failed() or "")}: not scored</p>'
    else:
        assert e.results is not None
        warns = "".join(f'<p class="warning">warning: {escape(w)}</p>' for w in e.run.warnings)
        body = warns + results_html(e.results, e.slug)
    return f'<details class="run"{" open" if open_ else ""}>{summary}{body}</details>'


def _definitions(bench: str) -> str:
    """The benchmark's metrics, each in one sentence and its formula, and its baseline."""
    from mindprobe.registry import BENCHMARKS, get_benchmark

    if bench not in BENCHMARKS:
        return ""
    defs = get_benchmark(bench).metric_definitions()
    if not defs:
        return ""
    items = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in defs.items())
    return f'<dl class="defs">{items}</dl>'


def _sweep_runs(bench: str, entries: list[RunEntry]) -> list[RunEntry]:
    """Runs the benchmark never takes as a headline (a prompt sweep's validation runs)."""
    from mindprobe.registry import BENCHMARKS, get_benchmark

    if bench not in BENCHMARKS:
        return []
    b = get_benchmark(bench)
    return [e for e in entries if b.setting_rank(e.run.variant, e.setting) is None]


def benchmark_html(data: ReportData, bench: str) -> str:
    from mindprobe.registry import BENCHMARKS

    entries = data.of(bench)
    info = BENCHMARKS.get(bench)
    parts = [f'<section class="block" id="bench-{escape(bench)}"><h2>{escape(bench)}'
             + (f" <small>{escape(info.title)}</small>" if info else "") + "</h2>"]
    partial = [e for e in entries if e.partial()]
    if partial:
        items = "; ".join(f"{e.title}: {e.partial()}" for e in partial)
        parts.append(f'<p class="partial">{len(partial)} of {len(entries)} run(s) are partial '
                     f"— {escape(items)}. Their numbers cover only the recorded items.</p>")
    parts.append(_definitions(bench))
    sweep = _sweep_runs(bench, entries)
    if sweep:
        items = "".join(f'<li><a href="#run-{e.slug}">{escape(e.title)}</a>: '
                        f"{escape(profile.headline_cell(e.results.headline if e.results else None))}"
                        "</li>" for e in sweep)
        parts.append(f'<div id="sweep-{escape(bench)}"><p class="small"><b>Sweep</b>: these '
                     "validation runs chose a setting; they are never a headline and their "
                     f'plots are left out.</p><ul class="small">{items}</ul></div>')
    shown = [e for e in entries if e not in sweep and not e.failed()]
    runs = [e.run for e in shown]
    results = [e.results for e in shown]
    if runs:  # a benchmark a profile did not run has no plot, only its published rows
        parts.append(_figs(plots.plots_for(bench, runs, results)))
    across = across_runs_of(bench, [e.run for e in entries if e.results is not None])
    if across is not None and across.tables:
        parts.append(f'<div class="run"><h3>{escape(bench)} · runs side by side</h3>'
                     f"{results_html(across, f'across-{bench}')}</div>")
    parts += _combined(bench, entries)
    if len(entries) > OPEN_RUNS:
        parts.append(f'<p class="muted">{len(entries)} runs: click a run to see its tables '
                     "(all of them are shown when printed).</p>")
    for e in entries:
        parts.append(_run_html(e, len(entries) <= OPEN_RUNS))
    for name, res in published_sections(data, bench):
        key = "published-" + "".join(ch if ch.isalnum() else "-" for ch in name)
        parts.append(f'<div class="run"><h3 id="{escape(key)}">{escape(name)}</h3>'
                     + results_html(res, key) + "</div>")
    for name, res in data.extra.items():
        if res.benchmark == bench:
            key = "extra-" + "".join(ch if ch.isalnum() else "-" for ch in name)
            parts.append(f'<div class="run"><h3 id="{escape(key)}">{escape(name)}</h3>'
                         + _figs(plots.generic_plots([_FakeRun(name)], [res]))
                         + results_html(res, key) + "</div>")
    parts.append("</section>")
    return "".join(parts)


class _FakeRun:
    """What generic_plots reads of a run, for Results that come from no run directory."""

    def __init__(self, name: str) -> None:
        self.variant, self.model_label, self.prompting, self.records = name, name, "basic", []
        self.manifest: dict[str, Any] = {}


def _combined(bench: str, entries: list[RunEntry]) -> list[str]:
    """The benchmark's own view of a model's several variants (e.g. side by side)."""
    out = []
    by_model: dict[str, dict[str, Results]] = {}
    for e in entries:
        if e.results is not None:
            by_model.setdefault(e.model, {})[e.run.variant] = e.results
    for model, by_variant in by_model.items():
        if len(by_variant) < 2:
            continue
        res = combined_of(bench, by_variant)
        if res is not None and res.tables:
            key = f"combined-{bench}-{model}"
            out.append(f'<div class="run"><h3>{escape(model)} · all variants</h3>'
                       f"{results_html(res, key)}</div>")
    return out


def render_html(data: ReportData, comparisons: list[Comparison], compare_how: str,
                price: Price | None, max_items: int, left_out: Sequence[str] = ()) -> str:
    plots.set_colors(data.color)
    benches = list(dict.fromkeys([*data.benchmarks(),
                                  *(r.benchmark for r in data.extra.values())]))
    models = profile.models_of(data)
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    toc = "".join(f'<a href="#{i}">{escape(t)}</a>' for i, t in (
        ("profile", "Profile"), *((f"bench-{b}", b) for b in benches),
        ("comparisons", "Comparisons"), ("transcripts", "Transcripts"),
        ("provenance", "Provenance")))
    n_partial = sum(1 for e in data.entries if e.partial())
    summary = (f"{len(data.entries)} run(s) · {len(models)} model(s): {', '.join(models)} · "
               f"{len(benches)} benchmark(s) · generated {now} by mindprobe {__version__}")
    if n_partial:
        summary += f" · {n_partial} partial run(s)"
    anchors = transcripts.anchors(data, max_items)
    cmp_html = comparisons_html(comparisons, anchors, list(left_out)) if comparisons else (
        '<p class="muted">No two models ran the same benchmark, variant, setting and data on shared items; run a '
        "second model on the same items (or pass --compare A B) to compare them.</p>")
    body = [
        f'<header class="top"><div class="wrap"><h1>{escape(data.title)}</h1>'
        f"<p>{escape(summary)}</p></div></header>",
        f'<nav class="toc"><div class="wrap">{toc}</div></nav><main class="wrap">',
        '<section class="block" id="profile"><h2>Cognitive profile</h2>'
        '<p class="lead">One row per model, one column per benchmark: the headline of the '
        "model's run chosen by the benchmark's rule (below; a setting other than the paper's "
        "default is named in amber), with its 95% confidence interval [low, high] and the "
        "number of items n; — marks a benchmark the model has not run. Column heads give the "
        "chance level (what guessing scores) and the <code>random</code> model's score. "
        "Click a column head to reorder the rows.</p>",
        profile.profile_html(data),
        _figs(profile.profile_charts(data), small=True),
        "</section>",
        *(benchmark_html(data, b) for b in benches),
        '<section class="block" id="comparisons"><h2>Paired comparisons</h2>'
        f'<p class="lead">{escape(compare_how)}. Differences are computed on the items both '
        "runs answered.</p>" + cmp_html + "</section>",
        '<section class="block" id="transcripts"><h2>Transcripts</h2>'
        + transcripts.transcripts_html(data, max_items) + "</section>",
        '<section class="block" id="provenance"><h2>Provenance</h2>'
        + provenance_html(data, price) + "</section>",
        f'<footer>Made by mindprobe {__version__}. This file is self-contained: it loads '
        "nothing from the network.</footer></main>",
        '<script type="application/json" id="mindprobe-data">'
        + data_json(data, comparisons, price) + "</script>",
        f"<script>{JS}</script>",
    ]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<meta name="generator" content="mindprobe">'
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
            f"<title>{escape(data.title)}</title><style>{CSS}</style></head><body>"
            + "".join(body) + "</body></html>\n")
