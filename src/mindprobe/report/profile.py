"""The cognitive profile: for every model, one headline per benchmark (and variant) with its 95%
CI, models side by side, the chance or random level marked; a run a model has not made is
missing (—), never zero."""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

from mindprobe.core.results import Headline, _fmt
from mindprobe.report.collect import ReportData, RunEntry
from mindprobe.report.svg import interval_chart, ok

MISSING = "—"


@dataclass
class ProfileRow:
    benchmark: str
    variant: str
    prompting: str
    label: str
    cells: dict[str, RunEntry] = field(default_factory=dict)
    chance: float | None = None
    random: float | None = None

    def headline(self, model: str) -> Headline | None:
        e = self.cells.get(model)
        return e.results.headline if e is not None and e.results is not None else None

    @property
    def metric(self) -> str:
        for e in self.cells.values():
            if e.results is not None and e.results.headline is not None:
                h = e.results.headline
                return h.name + (f" ({h.unit.strip()})" if h.unit.strip() else "")
        return "–"

    def reference_text(self) -> str:
        parts = []
        if ok(self.chance):
            parts.append(f"chance {_fmt(self.chance)}")
        if ok(self.random):
            parts.append(f"random run {_fmt(self.random)}")
        return " · ".join(parts) or MISSING


def models_of(data: ReportData) -> list[str]:
    """Every model, the random baseline last."""
    models = data.models()
    return [m for m in models if m != "random"] + [m for m in models if m == "random"]


def profile_rows(data: ReportData) -> list[ProfileRow]:
    """One row per benchmark, variant (and prompting, where a variant was run several ways)."""
    promptings: dict[tuple[str, str], set[str]] = {}
    for e in data.entries:
        promptings.setdefault((e.benchmark, e.run.variant), set()).add(e.run.prompting)
    rows: dict[tuple[str, str, str], ProfileRow] = {}
    for e in data.entries:
        key = (e.benchmark, e.run.variant, e.run.prompting)
        several = len(promptings[(e.benchmark, e.run.variant)]) > 1
        label = f"{e.benchmark} · {e.run.variant}" + (f" · {e.run.prompting}" if several else "")
        row = rows.setdefault(key, ProfileRow(*key, label))
        if e.model in row.cells:  # a second run of the same model and setting: keep both
            label2 = f"{label} · {e.run.dir.name}"
            row = rows.setdefault((*key[:2], f"{key[2]}/{e.run.dir}"),
                                  ProfileRow(*key, label2))
        row.cells[e.model] = e
    for row in rows.values():
        for e in row.cells.values():
            h = e.results.headline if e.results is not None else None
            if h is not None and ok(h.chance) and row.chance is None:
                row.chance = h.chance
        rand = row.cells.get("random") or next(
            (e for e in data.entries if e.model == "random" and e.benchmark == row.benchmark
             and e.run.variant == row.variant), None)
        if rand is not None and rand.results is not None and rand.results.headline is not None:
            row.random = rand.results.headline.value
    return list(rows.values())


def headline_cell(h: Headline | None) -> str:
    """The headline as the terminal formats it: value [low, high] unit."""
    if h is None or h.value is None:
        return MISSING
    ci = ""
    if h.ci_low is not None and h.ci_high is not None:
        ci = f" [{_fmt(h.ci_low)}, {_fmt(h.ci_high)}]"
    return f"{_fmt(h.value)}{h.unit}{ci}"


def profile_table(data: ReportData) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of the profile as text cells, for HTML, Markdown and LaTeX alike."""
    models = models_of(data)
    header = ["benchmark", "metric", *models, "chance / random"]
    body = []
    for row in profile_rows(data):
        cells = []
        for m in models:
            e = row.cells.get(m)
            text = headline_cell(row.headline(m))
            if e is not None and e.partial():
                text += " (partial)"
            cells.append(text)
        body.append([row.label, row.metric, *cells, row.reference_text()])
    return header, body


def profile_html(data: ReportData) -> str:
    models = models_of(data)
    rows = profile_rows(data)
    head = "".join(f'<th class="num"><span class="swatch" style="background:{data.color(m)}">'
                   f"</span>{escape(m)}</th>" for m in models)
    lines = [f'<table class="profile"><thead><tr><th>benchmark</th><th>metric</th>{head}'
             '<th class="num">chance / random</th></tr></thead><tbody>']
    for row in rows:
        tds = []
        for m in models:
            e = row.cells.get(m)
            h = row.headline(m)
            if e is None:
                tds.append(f'<td class="num missing" title="{escape(m)} has not run this">'
                           f"{MISSING}</td>")
                continue
            note = ""
            if e.error:
                note = ' <span class="badge err">not analysed</span>'
            elif e.partial():
                note = f' <span class="badge warn" title="{escape(e.partial() or "")}">partial</span>'
            n = f'<span class="n">n={h.n}</span>' if h is not None and h.n is not None else ""
            tds.append(f'<td class="num"><a href="#run-{e.slug}">{escape(headline_cell(h))}</a>'
                       f"{note}{n}</td>")
        lines.append(f'<tr><th scope="row"><a href="#bench-{escape(row.benchmark)}">'
                     f"{escape(row.label)}</a></th><td>{escape(row.metric)}</td>{''.join(tds)}"
                     f'<td class="num ref">{escape(row.reference_text())}</td></tr>')
    lines.append("</tbody></table>")
    return "".join(lines)


def profile_charts(data: ReportData) -> list[str]:
    """One small panel per profile row: each model's headline and CI, chance/random dashed."""
    models = models_of(data)
    out = []
    for row in profile_rows(data):
        shown = [m for m in models if m in row.cells]
        vals, lows, highs = [], [], []
        for m in shown:
            h = row.headline(m)
            vals.append(h.value if h else None)
            lows.append(h.ci_low if h else None)
            highs.append(h.ci_high if h else None)
        if not any(ok(v) for v in vals):
            continue
        refs = []
        if ok(row.chance):
            refs.append((row.chance, "chance"))
        if ok(row.random) and "random" not in shown:
            refs.append((row.random, "random"))
        unit_range = all(ok(v) and -1e-9 <= v <= 1 + 1e-9 for v in vals + [r for r, _ in refs])
        name = row.metric
        out.append(interval_chart(
            shown, vals, lows, highs, colors=[data.color(m) for m in shown],
            title=row.label, x_label=name, refs=refs,
            x_range=(0.0, 1.0) if unit_range and "accuracy" in name.lower() else None))
    return out
