"""What a benchmark's metrics are: a headline with its CI, named tables, notes and warnings.

Benchmarks build `Results` (tables are pandas DataFrames, CIs as columns); core renders them to
the terminal, to JSON and to the HTML report, so every view shows the same numbers and no
benchmark renders by hand. `detail` keeps benchmark-specific JSON (the raw counts, per-judge
documents) that the tables summarise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mindprobe.core.numbers import (
    PERCENT_DIGITS,
    Table,
    decimals_for,
    display,
    interval,
    legend,
    number,
    plain,
)
from mindprobe.core.table_columns import columns_of

if TYPE_CHECKING:
    from pathlib import Path

    import pandas as pd
    from rich.console import Console

__all__ = ["Headline", "Results", "Table", "failed_results", "render_results", "table_json"]


@dataclass
class Headline:
    """One number that stands for the run, e.g. accuracy 0.62 [0.58, 0.66], chance 0.5."""

    name: str
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    unit: str = ""
    chance: float | None = None
    n: int | None = None
    ci_method: str | None = None
    #: Shown ×100 with a % sign (values stay fractions in JSON), as the tables show them.
    percent: bool = False
    #: The score of always giving the most frequent right answer (closed answer sets): the
    #: majority-answer baseline a headline must be read against besides chance.
    majority: float | None = None
    #: `13 of 30 items` when the value is over fewer items than the run planned (items that
    #: ended in errors or were not recorded; `core.run_state.label_subset`), shown with it.
    subset: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {k: plain(v) for k, v in self.__dict__.items()}

    def text(self) -> str:
        return f"{self.name} {self.value_text()}"

    def value_text(self) -> str:
        """`49.9% [45.0, 54.8]`: the value, its unit and interval in the table's format, the
        same in the terminal, `runs` and every report format."""
        if self.value is None:
            return "–"
        unit = "%" if self.percent else self.unit
        # a share in % and a count with a unit (turns) read with one decimal, as in the tables
        dec = None if self.percent else (PERCENT_DIGITS if self.unit.strip() else
                                         decimals_for([self.value]))
        ci = ""
        if self.ci_low is not None and self.ci_high is not None:
            ci = " " + interval(self.ci_low, self.ci_high, dec, self.percent)
        over = f" (over {self.subset})" if self.subset else ""
        return f"{number(self.value, dec, self.percent)}{unit}{ci}{over}"

    def chance_text(self) -> str | None:
        if self.chance is None:
            return None
        return number(self.chance, None, self.percent) + ("%" if self.percent else "")


@dataclass
class Results:
    benchmark: str
    headline: Headline | None = None
    tables: dict[str, Table] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)
    #: (answers that were not valid answers, answers): every benchmark counts them under one
    #: name, so `runs`, JSON and the report can show them next to the score.
    invalid: tuple[int, int] | None = None
    #: (items that ended in errors, items) when every item did: the run failed and has no
    #: score (see failed_results), whatever the benchmark would compute from nothing.
    failed: tuple[int, int] | None = None
    #: Why answers were invalid, by kind (e.g. {"placeholder": 4}), where a benchmark says.
    invalid_kinds: dict[str, int] = field(default_factory=dict)
    #: Where the run lies and the whole JSON document `mindprobe run --json` prints for it
    #: (set by the library for a run it executed; not part of `to_json`).
    run_dir: Path | None = field(default=None, repr=False, compare=False)
    document: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    #: The per-variant results behind a view over several variants (`name:all`).
    variants: dict[str, Results] = field(default_factory=dict, repr=False, compare=False)

    def add_table(self, name: str, frame: pd.DataFrame | list[dict[str, Any]], title: str = "",
                  **kw: Any) -> None:
        """`frame`: a DataFrame, or its rows (made into one when the table is first read)."""
        self.tables[name] = Table(frame, title or name, **kw)

    def headline_dict(self) -> dict[str, Any] | None:
        return self.headline.as_dict() if self.headline else None

    def invalid_dict(self) -> dict[str, Any] | None:
        if self.invalid is None:
            return None
        k, n = self.invalid
        return {"count": k, "of": n, "rate": k / n if n else None,
                **({"kinds": dict(self.invalid_kinds)} if self.invalid_kinds else {})}

    def failed_dict(self) -> dict[str, Any] | None:
        if self.failed is None:
            return None
        return {"errors": self.failed[0], "of": self.failed[1]}

    def failed_text(self) -> str | None:
        """How every view names a failed run, in place of a score."""
        if self.failed is None:
            return None
        return f"failed: {self.failed[0]} of {self.failed[1]} items ended in errors"

    def invalid_text(self) -> str | None:
        """`invalid answers: 4 of 40 (10.0%; placeholder 4)`, the same line in every view."""
        if self.invalid is None:
            return None
        k, n = self.invalid
        kinds = "; ".join(f"{kind} {c}" for kind, c in self.invalid_kinds.items())
        share = f"{100 * k / n:.1f}%" if n else "–"
        return f"invalid answers: {k} of {n} ({share}" + (f"; {kinds})" if kinds else ")")

    def to_json(self) -> dict[str, Any]:
        """The JSON envelope every benchmark shares (benchmark-specific detail alongside)."""
        doc: dict[str, Any] = {k: _clean_tree(v) for k, v in self.detail.items()}
        doc.update(
            benchmark=self.benchmark,
            headline=self.headline_dict(),
            failed=self.failed_dict(),
            invalid=self.invalid_dict(),
            tables={name: table_json(t) for name, t in self.tables.items()},
            notes=list(self.notes),
            warnings=list(self.warnings),
        )
        return doc


def table_json(t: Table) -> list[dict[str, Any]]:
    """Rows as records (the index becomes columns), NaN as null."""
    cols = columns_of(t)
    if cols is not None:  # from the rows themselves: no pandas
        return [{str(k): plain(cols.values[k][i]) for k in cols.names}
                for i in range(len(cols.values[cols.names[0]]))] if cols.names else []
    frame = t.frame.reset_index() if t.index and _named_index(t.frame) else t.frame
    return [{str(k): plain(v) for k, v in row.items()} for row in frame.to_dict("records")]


def _named_index(frame: pd.DataFrame) -> bool:
    return any(n is not None for n in frame.index.names)


def _clean_tree(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _clean_tree(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean_tree(x) for x in v]
    return plain(v)


def _fmt(v: Any, percent: bool = False) -> str:
    v = plain(v)
    if v is None:
        return "–"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if percent:
            return f"{100 * v:.1f}"
        return f"{v:.4g}" if abs(v) < 1e4 else f"{v:,.0f}"
    return str(v)


def failed_results(benchmark: str, records: list[dict[str, Any]]) -> Results | None:
    """None unless every record ended in an error; then the Results of a failed run: no
    headline and no score (a benchmark would score errors as 0 with a confidence interval, as
    if the model had answered wrongly), the errors counted by message instead."""
    errors = [str(r["error"]) for r in records if "error" in r]
    if not records or len(errors) < len(records):
        return None
    import pandas as pd

    counts: dict[str, int] = {}
    for e in errors:
        counts[e] = counts.get(e, 0) + 1
    res = Results(benchmark, failed=(len(errors), len(records)))
    frame = pd.DataFrame([{"error": e, "items": n} for e, n in
                          sorted(counts.items(), key=lambda kv: -kv[1])[:20]])
    res.add_table("errors", frame, f"run failed: all {len(records)} items ended in errors "
                  "(no score)", index=False)
    res.warnings.append(f"{res.failed_text()}: there is nothing to score; fix the cause (first "
                        f"error: {errors[0]}) and resume the run with --retry-errors")
    return res


def render_results(results: Results, console: Console) -> None:
    """Every table, then notes and warnings, on `console`: cells as core/numbers.py formats
    them for every view, fitted to the console's width by core/terminal.py."""
    from rich.markup import escape

    from mindprobe.core.terminal import print_lines, print_table

    if results.failed is not None:
        console.print(f"[bold red]{results.failed_text()}[/bold red]", highlight=False)
    for t in results.tables.values():
        heads, rows, numeric = display(t)
        print_table(console, t.title, heads, rows, numeric, legend(t))
    print_lines(console, [*([results.invalid_text()] if results.invalid_text() else []),
                          *results.notes])
    h = results.headline  # every benchmark's, a plugin's too: the one number a run is read by
    if h is not None and results.failed is None:
        n = f" (n={h.n:,})" if h.n is not None else ""
        console.print(f"headline: {escape(h.text())}{n}", highlight=False)
    for w in results.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(w)}", highlight=False)
