"""Paired comparison of two runs on the items they share: the mean difference with a seeded
paired-bootstrap CI and, for right/wrong scores, McNemar's test; the items they disagree on.

The per-item score, and the record fields that describe an item, are the benchmark's
(`Benchmark.paired_score`; by default a boolean `correct`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from html import escape
from typing import Any

import numpy as np

from mindprobe.core.benchmark import PairedScore
from mindprobe.core.stats import N_BOOT, exact_mean, paired_difference
from mindprobe.errors import UsageError
from mindprobe.report.collect import ReportData, RunEntry

N_RESAMPLES = N_BOOT
SEED = 0
MAX_DISAGREEMENTS = 50
MAX_AUTO_PAIRS = 12
#: Fewer shared scored items than this give no paired interval or test: a bootstrap over 3
#: items says "[-0.0, -0.0]", which reads as a measured zero.
MIN_PAIRED = 10


def paired_score(benchmark: str) -> PairedScore:
    """What the benchmark's runs are compared on, item by item (`Benchmark.paired_score`; a
    benchmark that is not installed: the default)."""
    from mindprobe.registry import BENCHMARKS, get_benchmark

    return get_benchmark(benchmark).paired_score if benchmark in BENCHMARKS else PairedScore()


@dataclass
class Comparison:
    a: RunEntry
    b: RunEntry
    score_name: str
    binary: bool
    n: int = 0
    only_a: int = 0
    only_b: int = 0
    mean_a: float | None = None
    mean_b: float | None = None
    diff: float | None = None
    ci: tuple[float, float] | None = None
    #: McNemar: a right & b wrong, a wrong & b right, exact p, chi² (continuity corrected), its p.
    a_only_right: int = 0
    b_only_right: int = 0
    p_exact: float | None = None
    chi2: float | None = None
    p_chi2: float | None = None
    disagreements: list[tuple[str, float, float, str, str, str]] = field(default_factory=list)
    n_disagree: int = 0
    note: str = ""


def mcnemar(b: int, c: int) -> tuple[float, float, float]:
    """(exact two-sided binomial p, chi² with continuity correction, its p) for the discordant
    counts b and c."""
    from scipy import stats

    if b + c == 0:
        return 1.0, 0.0, 1.0
    p_exact = float(stats.binomtest(min(b, c), b + c, 0.5).pvalue)
    chi2 = (abs(b - c) - 1) ** 2 / (b + c)
    return p_exact, float(chi2), float(stats.chi2.sf(chi2, 1))


def _describe(score: PairedScore, rec: dict[str, Any]) -> str:
    return " · ".join(f"{k} {rec[k]}" for k in score.describe if rec.get(k) is not None)


def compare(a: RunEntry, b: RunEntry) -> Comparison:
    """Compare two runs of one benchmark on their shared, scored items."""
    paired = paired_score(a.benchmark)
    score, binary = paired.score, paired.binary
    cmp = Comparison(a, b, paired.label, binary)
    ra = {r["id"]: r for r in a.run.records if "error" not in r}
    rb = {r["id"]: r for r in b.run.records if "error" not in r}
    ids = [i for i in ra if i in rb]
    cmp.only_a, cmp.only_b = len(ra) - len(ids), len(rb) - len(ids)
    pairs = [(i, score(ra[i]), score(rb[i])) for i in ids]
    pairs = [(i, x, y) for i, x, y in pairs if x is not None and y is not None]
    cmp.n = len(pairs)
    if not pairs:
        cmp.note = (f"no shared item: their {len(ra):,} and {len(rb):,} answered items have no "
                    "id in common" if not ids else f"none of the {len(ids):,} shared items has "
                    f"a {paired.label} score in both runs")
        return cmp
    xa = np.array([x for _, x, _ in pairs])
    xb = np.array([y for _, _, y in pairs])
    cmp.mean_a, cmp.mean_b = exact_mean(xa), exact_mean(xb)
    cmp.diff = cmp.mean_a - cmp.mean_b
    if cmp.n < MIN_PAIRED:
        cmp.note = (f"too little overlap: only {cmp.n} shared item(s) scored in both runs, "
                    f"fewer than the {MIN_PAIRED} a paired interval needs")
    else:
        diff = paired_difference(xa, xb, seed=SEED)  # the resampling every comparison uses
        cmp.ci = (diff.low, diff.high)
    if binary and cmp.ci is not None:
        cmp.a_only_right = int(((xa == 1) & (xb == 0)).sum())
        cmp.b_only_right = int(((xa == 0) & (xb == 1)).sum())
        cmp.p_exact, cmp.chi2, cmp.p_chi2 = mcnemar(cmp.a_only_right, cmp.b_only_right)
    differ = [(i, x, y) for i, x, y in pairs if x != y]
    cmp.n_disagree = len(differ)
    cmp.disagreements = [(i, x, y, _describe(paired, ra[i]), paired.answer_of(ra[i]),
                          paired.answer_of(rb[i])) for i, x, y in differ[:MAX_DISAGREEMENTS]]
    return cmp


def _label(e: RunEntry) -> str:
    return f"{e.model} ({e.run.prompting})"


def auto_pairs(data: ReportData) -> tuple[list[tuple[RunEntry, RunEntry]], int]:
    """Runs of two models with the same benchmark, variant, setting (prompting / solver) and
    dataset version that share item ids, by pairs (capped); and how many there were in all."""
    groups: dict[tuple[str, str, str, str | None], list[RunEntry]] = {}
    for e in data.entries:
        if e.results is not None and not e.failed():  # like for like: same setting and data
            groups.setdefault(e.like(), []).append(e)
    pairs = []
    for group in groups.values():
        for x, y in itertools.combinations(group, 2):
            if x.model == y.model:
                continue
            ids = {r["id"] for r in x.run.records}
            if any(r["id"] in ids for r in y.run.records):
                # the real model first, the random baseline second
                pairs.append((y, x) if x.model == "random" else (x, y))
    return pairs[:MAX_AUTO_PAIRS], len(pairs)


def _matches(e: RunEntry, spec: str) -> bool:
    from pathlib import Path

    p = Path(spec)
    if p.is_dir():
        return p.resolve() == e.run.dir.resolve()
    return e.model == spec


def requested_pairs(data: ReportData, a: str, b: str) -> list[tuple[RunEntry, RunEntry]]:
    """`--compare A B`: two run directories, or two model labels (every benchmark and variant
    both have run)."""
    ea = [e for e in data.entries if _matches(e, a)]
    eb = [e for e in data.entries if _matches(e, b)]
    for spec, found in ((a, ea), (b, eb)):
        if not found:
            models = ", ".join(data.models())
            raise UsageError(f"--compare {spec}: no such run directory or model label in the "
                             f"report (models: {models})")
    pairs = [(x, y) for x in ea for y in eb if x.like() == y.like() and x.run.dir != y.run.dir]
    if not pairs:
        raise UsageError(f"--compare {a} {b}: they share no benchmark, variant, prompting / "
                         "solver and dataset version (only like-for-like runs are compared)")
    return pairs


def _setting_text(e: RunEntry) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(e.setting.items())) or "default setting"


def not_compared(data: ReportData, a: str, b: str,
                 pairs: list[tuple[RunEntry, RunEntry]]) -> list[str]:
    """`--compare A B`: each run of A or B left out, and why: the other side has no run of its
    benchmark and variant, or only runs of another setting or dataset version."""
    paired = {id(e) for pair in pairs for e in pair}
    sides = ([e for e in data.entries if _matches(e, a)],
             [e for e in data.entries if _matches(e, b)])
    out = []
    for mine, other, name in ((sides[0], sides[1], b), (sides[1], sides[0], a)):
        for e in mine:
            if id(e) in paired:
                continue
            what = f"{e.benchmark} · {e.run.variant}"
            same = [o for o in other if (o.benchmark, o.run.variant)
                    == (e.benchmark, e.run.variant) and o.run.dir != e.run.dir]
            if not same:
                why = f"{name} has no run of {what}"
            else:
                settings = sorted({_setting_text(o) for o in same if o.setting != e.setting})
                versions = sorted({str(o.dataset_version) for o in same
                                   if o.dataset_version != e.dataset_version})
                why = f"{name}'s runs of it differ: " + "; ".join(
                    ([f"setting {' / '.join(settings)}"] if settings else [])
                    + ([f"dataset version {' / '.join(versions)} (this run: "
                        f"{e.dataset_version})"] if versions else []))
                why += " (only like-for-like runs are compared)"
            out.append(f"not compared: {e.model}'s {what} ({_setting_text(e)}): {why}")
    return out


def comparisons(data: ReportData, requested: tuple[str, str] | None = None
                ) -> tuple[list[Comparison], str, list[str]]:
    """The comparisons of the report, a line about how they were chosen, and the runs
    `--compare A B` leaves out, each with why."""
    left_out: list[str] = []
    if requested:
        pairs = requested_pairs(data, *requested)
        how = f"requested: {requested[0]} vs {requested[1]}"
        left_out = not_compared(data, *requested, pairs)
    else:
        pairs, total = auto_pairs(data)
        how = ("automatic: runs of two models with the same benchmark, variant, prompting / "
               "solver and dataset version that share item ids"
               + (f" (first {len(pairs)} of {total} pairs)" if total > len(pairs) else ""))
    return [compare(x, y) for x, y in pairs], how, left_out


def blank_reason(c: Comparison) -> str:
    """Why some of the pair's cells are "–" ("": none is): too few shared scored items for an
    interval or a test (`Comparison.note`), or a score that is a number, where McNemar's test
    of right/wrong answers does not apply."""
    if c.note:
        return c.note
    if not c.binary:
        return (f"{c.score_name} is a number per item, not right/wrong: McNemar's test "
                "(discordant items, p) does not apply; the CI is the paired bootstrap's")
    return ""


def footnotes(cs: list[Comparison], inline_notes: bool = False
              ) -> tuple[list[int | None], list[str]]:
    """Each pair's footnote number for its "–" cells (None: it has none) and the footnotes,
    one per reason, naming the pairs (`inline_notes`: a pair with a note shows it in its row
    instead)."""
    reasons: dict[str, list[str]] = {}
    marks: list[int | None] = []
    for c in cs:
        why = "" if inline_notes and c.note else blank_reason(c)
        if not why:
            marks.append(None)
            continue
        a, b = _names(c)
        reasons.setdefault(why, []).append(f"{c.a.benchmark} · {c.a.run.variant} ({a} vs {b})")
        marks.append(list(reasons).index(why) + 1)
    notes = [f"[{i}] – in {', '.join(pairs)}: {why}"
             for i, (why, pairs) in enumerate(reasons.items(), 1)]
    return marks, notes


def _f(v: float | None, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return f"{v:.{digits}g}" if abs(v) < 1e-3 and v != 0 else f"{v:.{digits}f}"


def _p(v: float | None) -> str:
    if v is None:
        return "–"
    return f"{v:.2e}" if v < 1e-3 else f"{v:.3f}"


def _names(c: Comparison) -> tuple[str, str]:
    """The two sides' labels: model names, with the prompting where it differs."""
    if c.a.model != c.b.model and c.a.run.prompting == c.b.run.prompting:
        return c.a.model, c.b.model
    return _label(c.a), _label(c.b)


def _diff_text(c: Comparison) -> str:
    return f"{_f(c.diff)} [{_f(c.ci[0])}, {_f(c.ci[1])}]" if c.ci else _f(c.diff)


def comparisons_html(cs: list[Comparison], anchors: dict[str, str],
                     left_out: list[str] | None = None) -> str:
    """A summary table (one row per pair; a "–" names its footnote, under the table), the runs
    `--compare` left out, then each pair's discordant items, folded."""
    marks, notes = footnotes(cs, inline_notes=True)
    head = ("<tr><th>benchmark · variant (score per item)</th><th>A</th><th>B</th>"
            '<th class="num">items</th><th class="num">mean A</th><th class="num">mean B</th>'
            '<th class="num">A − B [95% CI]</th><th class="num" title="items only A got right '
            '/ only B got right">discordant</th><th class="num">McNemar p</th>'
            '<th class="num">disagree</th></tr>')
    rows = []
    for i, c in enumerate(cs):
        a, b = _names(c)
        bench = f"{c.a.benchmark} · {c.a.run.variant}"
        if c.note:
            rows.append(f'<tr><td>{escape(bench)} <span class="muted">'
                        f'({escape(c.score_name)})</span></td><td class="model">{escape(a)}</td>'
                        f'<td class="model">{escape(b)}</td>'
                        f'<td colspan="7" class="muted">{escape(c.note)}</td></tr>')
            continue
        blank = "–" if marks[i] is None else (
            f'–<sup><a href="#cmp-note-{marks[i]}">{marks[i]}</a></sup>')
        disc = f"{c.a_only_right} / {c.b_only_right}" if c.binary else blank
        p = _p(c.p_exact) if c.binary else blank
        rows.append(
            f'<tr><td>{escape(bench)} <span class="muted">({escape(c.score_name)})</span></td>'
            f'<td class="model">{escape(a)}</td><td class="model">{escape(b)}</td>'
            f'<td class="num">{c.n:,}</td>'
            f'<td class="num">{_f(c.mean_a)}</td><td class="num">{_f(c.mean_b)}</td>'
            f'<td class="num"><b>{escape(_diff_text(c))}</b></td><td class="num">{disc}</td>'
            f'<td class="num">{p}</td><td class="num"><a href="#cmp-{i}">{c.n_disagree:,}'
            "</a></td></tr>")
    parts = [f'<div class="tablewrap"><table class="data cmp-summary"><thead>{head}</thead>'
             f"<tbody>{''.join(rows)}</tbody></table></div>",
             *(f'<p class="note" id="cmp-note-{i}">{escape(n)}</p>'
               for i, n in enumerate(notes, 1)),
             *(f'<p class="note">{escape(line)}</p>' for line in left_out or ()),
             f'<p class="note">CI: {N_RESAMPLES} paired-bootstrap resamples of the items '
             f"(seed {SEED}). For right/wrong scores, McNemar's test on the discordant items: "
             "exact binomial p above; χ² with continuity correction in each pair's details.</p>"]
    parts += [_pair_details(i, c, anchors) for i, c in enumerate(cs) if not c.note]
    return "".join(parts)


def _pair_details(i: int, c: Comparison, anchors: dict[str, str]) -> str:
    a, b = _names(c)
    facts = [f"{c.n:,} shared items ({c.only_a:,} only in A, {c.only_b:,} only in B)",
             f"A − B = {_diff_text(c)}"]
    if c.binary:
        facts.append(f"McNemar exact p = {_p(c.p_exact)}, χ² = {_f(c.chi2)} (p = {_p(c.p_chi2)})")
    summary = (f"{escape(c.a.benchmark)} · {escape(c.a.run.variant)}: <b>{escape(a)}</b> vs "
               f"<b>{escape(b)}</b> — {c.n_disagree:,} item(s) where they disagree")
    body = [f'<p class="note">{escape(" · ".join(facts))}</p>']
    if c.n_disagree:
        shown = len(c.disagreements)
        if shown < c.n_disagree:
            body.append(f'<p class="muted">first {shown} of {c.n_disagree:,} shown</p>')
        trs = []
        for item, x, y, desc, ans_a, ans_b in c.disagreements:
            link = anchors.get(f"{c.a.slug}/{item}") or anchors.get(f"{c.b.slug}/{item}")
            ident = escape(item)
            if link:
                ident = f'<a href="#{link}">{ident}</a>'
            trs.append(f'<tr><td class="iid">{ident}</td><td>{escape(desc)}</td>'
                       f'<td class="num">{_f(x)}</td><td>{escape(_short(ans_a))}</td>'
                       f'<td class="num">{_f(y)}</td><td>{escape(_short(ans_b))}</td></tr>')
        body.append('<div class="tablewrap"><table class="data"><thead><tr><th>item</th>'
                    f'<th>item facts</th><th class="num">A: {escape(a)}</th><th>A answer</th>'
                    f'<th class="num">B: {escape(b)}</th><th>B answer</th></tr></thead>'
                    f"<tbody>{''.join(trs)}</tbody></table></div>")
    else:
        body.append('<p class="muted">They agree on every shared item.</p>')
    return (f'<details class="cmp" id="cmp-{i}"><summary>{summary}</summary>'
            f"{''.join(body)}</details>")


def _short(text: str, n: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def comparison_rows(cs: list[Comparison]) -> tuple[list[str], list[list[str]], list[str]]:
    """The comparisons as a text table (Markdown / LaTeX) and its footnotes: a "–" cell names
    the one that says why."""
    header = ["benchmark", "A", "B", "items", "A − B [95% CI]", "McNemar p"]
    marks, notes = footnotes(cs)
    rows = []
    for c, mark in zip(cs, marks, strict=True):
        blank = "–" if mark is None else f"– [{mark}]"
        diff = f"{_f(c.diff)} [{_f(c.ci[0])}, {_f(c.ci[1])}]" if c.ci else blank
        rows.append([f"{c.a.benchmark} · {c.a.run.variant}", _label(c.a), _label(c.b),
                     str(c.n), diff, _p(c.p_exact) if c.binary and c.p_exact is not None
                     else blank])
    return header, rows, notes
