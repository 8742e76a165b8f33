"""The report's tables for a paper or a README: the cognitive profile, the paired comparisons
and every Results table, as Markdown or LaTeX (booktabs), cells formatted as in the terminal."""

from __future__ import annotations

import re
from collections.abc import Sequence

from mindprobe.core.numbers import legend
from mindprobe.core.results import Results
from mindprobe.report import profile
from mindprobe.report.collect import ReportData, across_runs_of
from mindprobe.report.compare import Comparison, comparison_rows
from mindprobe.report.published import published_sections
from mindprobe.report.tables import table_cells
from mindprobe.version import __version__


def _sections(data: ReportData, comparisons: list[Comparison], left_out: Sequence[str] = ()
              ) -> list[tuple[int, str, list[tuple[str, list[str], list[list[str]],
                                                 list[bool]]], list[str]]]:
    """(level, heading, [(caption, header, rows, numeric)], notes) in page order."""
    out = []
    header, rows, notes = profile.profile_table(data)
    numeric = [False] + [True] * (len(header) - 1)
    out.append((2, "Cognitive profile", [("Headline per benchmark and model with its 95% CI "
                                          "(— = not run; published = the paper's own models, "
                                          "never paired)", header, rows, numeric)], notes))
    benches = list(dict.fromkeys([*data.benchmarks(), *(r.benchmark for r in data.extra.values())]))
    for bench in benches:
        out.append((2, bench, [], []))
        across = across_runs_of(bench, [e.run for e in data.of(bench) if e.results is not None])
        if across is not None and across.tables:
            out.append((3, f"{bench} · runs side by side", _tables(across), _notes(across)))
        for e in data.of(bench):
            notes = [f"partial: {e.partial()}"] if e.partial() else []
            if e.error or e.results is None:
                out.append((3, e.title, [], [f"not analysed: {e.error}"]))
                continue
            out.append((3, e.title, _tables(e.results), notes + _notes(e.results)))
        for name, res in published_sections(data, bench):
            out.append((3, name, _tables(res), _notes(res)))
        for name, res in data.extra.items():
            if res.benchmark == bench:
                out.append((3, name, _tables(res), _notes(res)))
    if comparisons:
        h, r, blanks = comparison_rows(comparisons)
        # the footnotes of its "–" cells in the caption: typeset with the table in LaTeX too
        caption = " ".join(["paired bootstrap 95% CI (2000 resamples, seed 0); McNemar exact p "
                            "for right/wrong scores.", *blanks])
        out.append((2, "Paired comparisons", [(caption, h, r, [False] * 3 + [True] * 3)],
                    list(left_out)))
    return out


def _tables(res: Results) -> list[tuple[str, list[str], list[list[str]], list[bool]]]:
    out = []
    if res.headline is not None:
        h = res.headline
        out.append(("headline", ["metric", "value", "n"],
                    [[h.name, profile.headline_cell(h), "" if h.n is None else str(h.n)]],
                    [False, True, True]))
    for t in res.tables.values():
        header, rows, numeric = table_cells(t)
        out.append((t.title + (f" ({legend(t)})" if legend(t) else ""), header, rows, numeric))
    return out


def _notes(res: Results) -> list[str]:
    invalid = [res.invalid_text()] if res.invalid_text() else []
    return invalid + list(res.notes) + [f"warning: {w}" for w in res.warnings]


# -- Markdown ---------------------------------------------------------------------------------
#: Markdown's active characters, each shown as itself: HTML (`<`, `&`) as entities, the rest
#: behind a backslash: emphasis and code marks, a table's `|`, a `]` that would close a link
#: or a link definition, and `_` except inside a word (where it is inactive and frequent:
#: `avg_num_turns`). Every cell, heading and note goes through `md_text`, as the HTML page
#: escapes every text: a run name or reply never becomes markup (a prompt file named
#: `<img src=x onerror=…>` stays text); an interval `[low, high]` stays as printed.
_MD_ACTIVE = re.compile(r"[&<>\\`*|]|\](?=[(\[:])|_+")
_MD_ENTITY = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def _md_escape(m: re.Match[str]) -> str:
    s, i, j = m.string, m.start(), m.end()
    if s[i] == "_" and i > 0 and j < len(s) and s[i - 1].isalnum() and s[j].isalnum():
        return m.group()  # inside a word: inactive
    return _MD_ENTITY.get(m.group()) or "".join("\\" + ch for ch in m.group())


def md_text(text: str) -> str:
    """`text` as Markdown that renders as exactly that text, on one line."""
    return _MD_ACTIVE.sub(_md_escape, " ".join(str(text).split()))


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]],
             numeric: Sequence[bool]) -> str:
    lines = ["| " + " | ".join(md_text(h) for h in header) + " |",
             "|" + "|".join("---:" if n else ":---" for n in numeric) + "|"]
    lines += ["| " + " | ".join(md_text(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def render_markdown(data: ReportData, comparisons: list[Comparison],
                    left_out: Sequence[str] = ()) -> str:
    out = [f"# {md_text(data.title)}", "",
           f"{len(data.entries)} run(s), made with mindprobe {__version__}.", ""]
    for level, heading, tables, notes in _sections(data, comparisons, left_out):
        out += ["#" * level + " " + md_text(heading), ""]
        for caption, header, rows, numeric in tables:
            out += [f"*{md_text(caption)}*", "", md_table(header, rows, numeric), ""]
        out += [f"> {md_text(n)}" for n in notes] + ([""] if notes else [])
    return "\n".join(out).rstrip() + "\n"


# -- LaTeX ------------------------------------------------------------------------------------
_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
        "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
        "±": r"$\pm$", "–": "--", "—": "---", "−": "$-$", "·": r"$\cdot$", "≥": r"$\geq$",
        "≤": r"$\leq$", "×": r"$\times$", "…": r"\ldots{}", "χ": r"$\chi$", "²": r"$^2$",
        "<": r"\textless{}", ">": r"\textgreater{}"}


def tex(text: str) -> str:
    """`text` as LaTeX that typesets as that text (every special character escaped)."""
    return "".join(_TEX.get(ch, ch) for ch in text)


def _tex_comment(text: str) -> str:
    """`text` inside a `%` comment: on one line, so nothing after it becomes LaTeX."""
    return " ".join(str(text).split())


def latex_table(caption: str, header: Sequence[str], rows: Sequence[Sequence[str]],
                numeric: Sequence[bool]) -> str:
    spec = "".join("r" if n else "l" for n in numeric)
    lines = [r"\begin{table}[ht]", r"\centering", r"\small",
             rf"\caption{{{tex(caption)}}}", rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
             " & ".join(tex(h) for h in header) + r" \\", r"\midrule"]
    lines += [" & ".join(tex(c) for c in row) + r" \\" for row in rows]
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines)


def render_latex(data: ReportData, comparisons: list[Comparison],
                 left_out: Sequence[str] = ()) -> str:
    """Tables ready to \\input{} (needs \\usepackage{booktabs}); sections as comments+headings."""
    out = [f"% {_tex_comment(data.title)}: made with mindprobe {__version__}; needs \\usepackage{{booktabs}}",
           ""]
    for level, heading, tables, notes in _sections(data, comparisons, left_out):
        cmd = "section" if level == 2 else "subsection"
        out += [rf"\{cmd}*{{{tex(heading)}}}", ""]
        for caption, header, rows, numeric in tables:
            out += [latex_table(caption, header, rows, numeric), ""]
        out += [f"% {_tex_comment(n)}" for n in notes] + ([""] if notes else [])
    return "\n".join(out).rstrip() + "\n"
