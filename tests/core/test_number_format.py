"""Issue 22, observation 5: one number format per table in every view, one interval column
`[low, high]`, headers that fit 80 columns and never break mid-word."""

from __future__ import annotations

import io

import pandas as pd
from rich.console import Console

from mindprobe.core.numbers import display, legend
from mindprobe.core.results import Headline, Results, Table, render_results
from mindprobe.report.profile import headline_cell
from mindprobe.report.tables import table_cells


def _table() -> Table:
    frame = pd.DataFrame({"problem": ["ALL", "Compl"], "accuracy": [0.4997, 0.4940],
                          "ci_low": [0.4951, 0.41], "ci_high": [0.5043, 0.58],
                          "tokens_per_turn": [0.009487, 0.00448], "n": [20000, 12]})
    return Table(frame, "t", percent=("accuracy", "ci_low", "ci_high"), index=False,
                 intervals={"95% CI": ("ci_low", "ci_high")},
                 short={"tokens_per_turn": "tok/turn"})


def test_one_format_per_column_and_one_interval_column():
    heads, rows, _ = display(_table())
    assert heads == ["problem", "accuracy %", "95% CI %", "tok/turn", "n"]
    assert rows[0] == ["ALL", "50.0", "[49.5, 50.4]", "0.009487", "20000"]
    assert rows[1] == ["Compl", "49.4", "[41.0, 58.0]", "0.004480", "12"]  # same decimals
    assert legend(_table()) == "legend: tok/turn = tokens per turn"
    assert table_cells(_table()) == display(_table())  # the report's cells are the terminal's


def test_headline_is_percent_in_terminal_runs_and_report():
    h = Headline("accuracy", 0.4997, 0.4951, 0.5043, percent=True, chance=0.5)
    assert h.value_text() == "50.0% [49.5, 50.4]" == headline_cell(h)
    assert h.text() == "accuracy 50.0% [49.5, 50.4]" and h.chance_text() == "50.0%"


def test_terminal_headers_never_wrap_mid_word_at_80_columns():
    frame = pd.DataFrame({"accuracy_in_context": [0.5], "accuracy_no_context": [0.4],
                          "difference": [0.1]})
    res = Results("x")
    res.add_table("context", frame, "in vs no", percent=tuple(frame.columns), index=False)
    buf = io.StringIO()
    render_results(res, Console(file=buf, width=40, color_system=None))
    text = buf.getvalue()
    assert "contex" not in text.replace("context", "")  # no `in_contex / t %`
    assert all(len(line) <= 40 for line in text.splitlines())


def test_worldsense_table_fits_80_columns(cli, tmp_path):
    code, _, err = cli("run", "worldsense:fresh", "--model", "random", "--runs-dir",
                       tmp_path / "runs", "--limit", 60)
    assert code == 0, err
    code, out, _ = cli("analyse", "worldsense", "--run",
                       next((tmp_path / "runs").rglob("manifest.json")).parent)
    assert code == 0
    table = [ln for ln in out.splitlines() if ln.startswith(("┃", "│", "┏", "└"))]
    assert table and all(len(ln) <= 80 for ln in table), max(map(len, table))
    assert "acc ±95" not in out and "ci_low" not in out and "95% CI" in out
