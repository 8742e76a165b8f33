"""The cognitive profile, the report's first screen: one row per model (and per published
model, labelled), one column per benchmark holding the model's headline run chosen by the
benchmark's stated rule (`Benchmark.setting_rank`: the paper's default setting first), with its
95% CI; the chance level, the majority-answer baseline and the `random` model's score in the
column head; a run a model has not made is missing (—), never zero. Failed and unreadable runs are listed, not scored."""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

from mindprobe.core.published import PublishedRow
from mindprobe.core.results import Headline, _fmt
from mindprobe.report.collect import ReportData, RunEntry, row_name
from mindprobe.report.svg import interval_chart, ok
from mindprobe.report.tables import head_text

MISSING = "—"


@dataclass
class Cell:
    """What one model shows for one benchmark: its chosen run or a published number."""

    headline: Headline | None
    entry: RunEntry | None = None
    reference: PublishedRow | None = None
    #: How a published row's data differs from the run's ("" where it does not).
    data_label: str = ""
    #: The chosen run is not the paper's default setting (rank > 0).
    off_default: bool = False
    #: Validation runs of a sweep that led to this run.
    sweep: list[RunEntry] = field(default_factory=list)
    #: Variants the model ran in the headline's setting: the cell shows one of them.
    variants: int = 1

    @property
    def setting(self) -> str:
        if self.reference is not None:
            return " · ".join(x for x in (self.reference.setting_text(), self.data_label) if x)
        assert self.entry is not None
        return setting_text(self.entry.run.variant, self.entry.setting) + of_variants(
            self.variants)


def of_variants(n: int) -> str:
    """What a cell showing one variant of several says (each is in the benchmark's section)."""
    return f" (1 of {n} variants run; each below)" if n > 1 else ""


@dataclass
class Column:
    benchmark: str
    rule: str
    cells: dict[str, Cell] = field(default_factory=dict)
    failed: list[tuple[RunEntry, str]] = field(default_factory=list)
    chance: float | None = None
    majority: float | None = None
    random: float | None = None
    metric: str = "–"
    percent: bool = False
    definitions: dict[str, str] = field(default_factory=dict)
    #: (variant, setting, dataset version) of the column: other cells are marked, not charted.
    like: tuple[str, str, str | None] | None = None
    label: str = ""
    #: Where each of the user's models stands among the published rows of the setting.
    standing: dict[str, str] = field(default_factory=dict)
    #: Why the profile did not run this benchmark, and its fix ("" where it ran).
    not_run: str = ""


def setting_text(variant: str, setting: dict[str, str]) -> str:
    return " · ".join([variant, *(str(v) for v in setting.values())])


def headline_cell(h: Headline | None) -> str:
    """The headline as the terminal formats it: value [low, high] unit."""
    if h is None or h.value is None:
        return MISSING
    return h.value_text()  # core/numbers.py: the terminal's very format


def _value(v: float | None, h: Headline | None) -> str:
    if not ok(v) or h is None:
        return MISSING
    return f"{_fmt(v, h.percent)}{'%' if h.percent else h.unit}"


def models_of(data: ReportData) -> list[str]:
    """Every model, the random baseline last."""
    models = data.models()
    return [m for m in models if m != "random"] + [m for m in models if m == "random"]


def _like(e: RunEntry) -> tuple[str, str, str | None]:
    """(variant, setting, dataset version): what must match to share a chart."""
    return e.like()[1:]


def _choice_key(e: RunEntry, rank: int, default_variant: str) -> tuple:
    return (rank, e.run.variant != default_variant, bool(e.partial()), -len(e.run.records))


def columns(data: ReportData) -> list[Column]:
    """One column per benchmark: each model's headline run by the benchmark's rule."""
    from mindprobe.registry import BENCHMARKS, get_benchmark

    out = []
    for b in data.benchmarks():
        bench = get_benchmark(b) if b in BENCHMARKS else None
        default_variant = BENCHMARKS[b].default_variant if bench else ""
        col = Column(b, bench.setting_rule if bench else "")
        if bench is not None:
            col.definitions = bench.metric_definitions()
        ranked: list[tuple[tuple, RunEntry]] = []
        sweeps: dict[str, list[RunEntry]] = {}
        for e in data.of(b):
            why = e.error or e.failed()
            if why or e.results is None:
                col.failed.append((e, why or "no results"))
                continue
            rank = bench.setting_rank(e.run.variant, e.setting) if bench else 0
            if rank is None:
                sweeps.setdefault(e.model, []).append(e)
                continue
            ranked.append((_choice_key(e, rank, default_variant), e))
        # the column's setting: the best-ranked one, among those the most models share
        share: dict[tuple, set[str]] = {}
        for _, e in ranked:
            share.setdefault(_like(e), set()).add(e.model)
        best = min(ranked, key=lambda ke: (ke[0][:2], -len(share[_like(ke[1])])), default=None)
        col.like = _like(best[1]) if best else None
        col.label = setting_text(best[1].run.variant, best[1].setting) if best else ""
        chosen: dict[str, tuple[tuple, RunEntry]] = {}
        for key, e in ranked:
            mine = (_like(e) != col.like, *key)
            if e.model not in chosen or mine < chosen[e.model][0]:
                chosen[e.model] = (mine, e)
        for model, (key, e) in chosen.items():
            assert e.results is not None
            same = {x.run.variant for k, x in ranked if x.model == model and k[0] == key[1]}
            col.cells[model] = Cell(e.results.headline, e, off_default=bool(key[0]),
                                    sweep=sweeps.get(model, []), variants=len(same))
        if best is not None and best[1].model in col.cells:
            col.label += of_variants(col.cells[best[1].model].variants)
        if best is None and b in data.not_run:
            _not_run_column(data, col)
        if best is not None:
            from mindprobe.report.published import rows_beside, where_you_stand

            for ref, lab in rows_beside(data, best[1]):
                if ref.headline:
                    col.cells.setdefault(row_name(ref), Cell(ref.as_headline(), reference=ref,
                                                             data_label=lab))
            for model, cell in list(col.cells.items()):
                if cell.entry is not None and not cell.off_default:
                    text = where_you_stand(data, cell.entry)
                    if text:
                        col.standing[model] = text
        for cell in col.cells.values():
            h = cell.headline
            if h is not None and h.name and col.metric == "–":
                col.metric, col.percent = h.name, h.percent
            if h is not None and ok(h.chance) and col.chance is None:
                col.chance = h.chance
            if h is not None and ok(h.majority) and col.majority is None \
                    and cell.reference is None:
                col.majority = h.majority
        rand = col.cells.get("random")
        if rand is not None and rand.headline is not None and not rand.off_default:
            col.random = rand.headline.value
        out.append(col)
    return out


def _not_run_column(data: ReportData, col: Column) -> None:
    """A planned benchmark that did not run: its reason, and the published rows of the
    setting it would have run (never left out of the profile)."""
    from mindprobe.report.published import not_run_rows

    col.not_run = data.not_run[col.benchmark].text()
    pairs = not_run_rows(data, col.benchmark)
    col.label = "; ".join(dict.fromkeys(r.setting_text() for r, _ in pairs)) or "not run"
    for ref, lab in pairs:
        if ref.headline:
            col.cells.setdefault(row_name(ref), Cell(ref.as_headline(), reference=ref,
                                                     data_label=lab))


def row_names(data: ReportData, cols: list[Column]) -> list[str]:
    """The user's models (random last), then the published ones."""
    names = models_of(data)
    refs = [m for c in cols for m, cell in c.cells.items() if cell.reference is not None]
    return names + list(dict.fromkeys(refs))


def baseline_text(col: Column) -> str:
    h = Headline("", None, percent=col.percent)
    parts = []
    if ok(col.chance):
        parts.append(f"chance {_value(col.chance, h)}")
    if ok(col.majority):
        parts.append(f"majority answer {_value(col.majority, h)}")
    if ok(col.random):
        parts.append(f"random run {_value(col.random, h)}")
    return " · ".join(parts)


def profile_table(data: ReportData) -> tuple[list[str], list[list[str]], list[str]]:
    """(header, rows, notes) of the profile as text cells, for Markdown and LaTeX: the same
    curated table as the page."""
    cols = columns(data)
    header = ["model", *(f"{c.benchmark}: {c.metric}" for c in cols)]
    body = []
    for name in row_names(data, cols):
        cells = []
        for c in cols:
            cell = c.cells.get(name)
            if cell is None:
                cells.append("not run" if c.not_run else MISSING)
                continue
            text = headline_cell(cell.headline)
            if cell.entry is not None and cell.entry.partial():
                text += " (partial)"
            if cell.off_default or cell.reference is not None:
                text += f" ({cell.setting})"
            cells.append(text)
        body.append([name, *cells])
    base = ["baselines", *(baseline_text(c) or MISSING for c in cols)]
    body.append(base)
    notes = [f"{c.benchmark}: not run in this profile: {c.not_run}" for c in cols if c.not_run]
    notes += [f"{c.benchmark}: headline run = {c.rule}" for c in cols if c.rule]
    for c in cols:
        for ref in {id(x.reference): x.reference for x in c.cells.values()
                    if x.reference is not None}.values():
            notes.append(f"{row_name(ref)}: {ref.source}")
        notes += [f"{c.benchmark}: where {m} stands: {t}" for m, t in c.standing.items()]
        if c.benchmark in data.no_published:
            notes.append(f"{c.benchmark}: {data.no_published[c.benchmark]}")
        notes += [f"{c.benchmark}: {e.model} · {e.run.variant} failed ({why}): not scored"
                  for e, why in c.failed]
    notes += [f"unreadable run {d}: {why}" for d, why in data.unreadable]
    return header, body, notes


def _sort_value(cell: Cell | None) -> str:
    h = cell.headline if cell else None
    return "" if h is None or not ok(h.value) else f"{h.value:.6g}"


def profile_html(data: ReportData) -> str:
    cols = columns(data)
    if not cols:
        return '<p class="muted">No run to profile.</p>'
    head = "".join(
        f'<th class="num orderable" data-col="{i + 1}" title="click to reorder">'
        f'<a href="#bench-{escape(c.benchmark)}">{head_text(c.benchmark)}</a> '
        f'<span class="metric" title="{escape(c.definitions.get(c.metric, ""))}">'
        f'{head_text(c.metric)} · {head_text(c.label)}</span>'
        f' <span class="base">{escape(baseline_text(c))}</span>'
        + (f' <span class="badge warn" title="{escape(c.not_run)}">not run</span>'
           if c.not_run else "") + "</th>"
        for i, c in enumerate(cols))
    lines = ['<div class="tablewrap"><table class="profile" id="profile-table"><thead><tr>'
             f'<th class="orderable" data-col="0" title="click to reorder">model</th>{head}</tr>'
             "</thead><tbody>"]
    for name in row_names(data, cols):
        published = any(c.cells.get(name) and c.cells[name].reference for c in cols)
        swatch = ("" if published else
                  f'<span class="swatch" style="background:{data.color(name)}"></span>')
        label = escape(name.split(" (published, ")[0])
        tag = ' <span class="badge pub">published</span>' if published else ""
        tds = [f'<th scope="row" data-v="{escape(name)}">{swatch}{label}{tag}</th>']
        for c in cols:
            tds.append(_cell_html(name, c.cells.get(name), c.not_run))
        lines.append(f'<tr class="{"pub" if published else "mine"}">{"".join(tds)}</tr>')
    lines.append("</tbody></table></div>")
    return "".join(lines) + _profile_notes(data, cols)


def _cell_html(name: str, cell: Cell | None, not_run: str = "") -> str:
    if cell is None and not_run:
        return (f'<td class="num missing" data-v="" title="{escape(not_run)}">not run</td>')
    if cell is None:
        return (f'<td class="num missing" data-v="" title="{escape(name)} has no run of this '
                f'benchmark">{MISSING}</td>')
    h = cell.headline
    value = escape(headline_cell(h))
    notes = []
    if cell.entry is not None:
        value = f'<a href="#run-{cell.entry.slug}">{value}</a>'
        why = cell.entry.partial()
        if why:
            notes.append(f'<span class="badge warn" title="{escape(why)}">partial</span>')
    if cell.sweep:
        notes.append(f'<a class="badge" href="#sweep-{escape(cell.sweep[0].benchmark)}" '
                     f'title="chosen by a sweep of {len(cell.sweep)} validation run(s)">'
                     "sweep</a>")
    n = f"n={h.n:,}" if h is not None and h.n is not None else ""
    setting = escape(cell.setting)
    cls = "setting off" if cell.off_default else "setting"
    return (f'<td class="num" data-v="{_sort_value(cell)}">{value}{"".join(notes)} '
            f'<span class="n">{escape(n)}</span> <span class="{cls}">{setting}</span></td>')


def _profile_notes(data: ReportData, cols: list[Column]) -> str:
    parts = []
    skipped = [c for c in cols if c.not_run]
    if skipped:
        items = "".join(f'<li><a href="#bench-{escape(c.benchmark)}">{escape(c.benchmark)}'
                        f"</a>: {escape(c.not_run)}</li>" for c in skipped)
        parts.append('<p class="small error">Planned but not run in this profile (its '
                     f'published rows are shown):</p><ul class="small">{items}</ul>')
    parts.append('<dl class="defs">')
    for c in cols:
        if c.rule:
            parts.append(f"<dt>{escape(c.benchmark)}</dt><dd>headline run: {escape(c.rule)}."
                         + "".join(f" <b>{escape(k)}</b>: {escape(v)}"
                                   for k, v in c.definitions.items()
                                   if k in (c.metric, "chance"))
                         + "</dd>")
    parts.append("</dl>")
    refs = [(c.benchmark, cell) for c in cols for cell in c.cells.values()
            if cell.reference is not None]
    if refs:
        items = "".join(f"<li><b>{escape(cell.reference.system)}</b> ({escape(b)}, "
                        f"{escape(cell.setting)}): "
                        f"{escape(headline_cell(cell.headline))} — source: "
                        f"{escape(cell.reference.source)}</li>"
                        for b, cell in refs if cell.reference is not None)
        parts.append('<p class="small"><span class="badge pub">published</span> rows are '
                     "the papers' and upstream's own numbers in the same setting (labelled "
                     "where their data differs), levels shown for reference and never used "
                     f"in a paired comparison:</p><ul class=\"small\">{items}</ul>")
    stand = [(c.benchmark, m, t) for c in cols for m, t in c.standing.items()]
    if stand:
        items = "".join(f"<li><b>{escape(m)}</b> on {escape(b)}: {escape(t)}</li>"
                        for b, m, t in stand)
        parts.append(f'<p class="small"><b>Where you stand</b></p><ul class="small">{items}'
                     "</ul>")
    absent = [(c.benchmark, data.no_published[c.benchmark]) for c in cols
              if c.benchmark in data.no_published]
    if absent:
        items = "".join(f"<li>{escape(b)}: {escape(t)}</li>" for b, t in absent)
        parts.append(f'<ul class="small">{items}</ul>')
    failed = [(e, why) for c in cols for e, why in c.failed]
    if failed:
        items = "".join(f'<li><a href="#run-{e.slug}">{escape(e.benchmark)} · '
                        f"{escape(e.title)}</a>: {escape(why)} — not scored</li>"
                        for e, why in failed)
        parts.append(f'<p class="small error">Failed runs (not scored):</p><ul class="small">'
                     f"{items}</ul>")
    if data.unreadable:
        items = "".join(f"<li><code>{escape(d)}</code>: {escape(why)}</li>"
                        for d, why in data.unreadable)
        parts.append('<p class="small error">Runs that could not be read (left out):</p>'
                     f'<ul class="small">{items}</ul>')
    return "".join(parts)


def profile_charts(data: ReportData) -> list[str]:
    """One compact panel per benchmark: each model's headline (dot) and CI (whisker), its own
    colour and marker; chance and the random run dashed."""
    from mindprobe.report.svg import marker_for

    cols = columns(data)
    names = row_names(data, cols)
    out = []
    for c in cols:
        shown = [m for m in names if m in c.cells and not c.cells[m].off_default]
        heads = [c.cells[m].headline for m in shown]
        vals = [h.value if h else None for h in heads]
        if not any(ok(v) for v in vals):
            continue
        refs = []
        if ok(c.chance):
            refs.append((c.chance, "chance"))
        if ok(c.random) and "random" not in shown:
            refs.append((c.random, "random run"))
        unit_range = all(ok(v) and -1e-9 <= v <= 1 + 1e-9 for v in vals + [r for r, _ in refs])
        labels = [m.split(" (published, ")[0] + " (published)" if c.cells[m].reference else m
                  for m in shown]
        out.append(interval_chart(
            labels, vals, [h.ci_low if h else None for h in heads],
            [h.ci_high if h else None for h in heads],
            colors=[data.color(m) for m in shown],
            markers=[marker_for(names.index(m)) for m in shown],
            hollow=[c.cells[m].reference is not None for m in shown],
            title=f"{c.benchmark}: {c.metric}" + (f" ({c.label})" if c.label else ""),
            refs=refs, percent=c.percent,
            x_range=(0.0, 1.0) if unit_range and c.percent else None))
    return out
