"""`report --compare`: every "–" of the comparison table says why, in a footnote under it that
names the pairs (a score that is a number has no McNemar test; too few shared items have no
interval), and each run of A or B left out is named with the reason (the other side has no run
of it, or only of another setting)."""

from __future__ import annotations

import re
import shutil
from html import unescape
from pathlib import Path

import pytest
from report_helpers import data_of, report, tables_of

NOTE_RE = re.compile(r'<p class="note" id="cmp-note-(\d+)">(.*?)</p>', re.S)


def _page_notes(page: str) -> dict[str, str]:
    return {k: " ".join(unescape(v).split()) for k, v in NOTE_RE.findall(page)}


def _md_rows(md: str) -> list[list[str]]:
    """The Markdown comparison table's rows (its caption holds the footnotes)."""
    part = md.split("## Paired comparisons", 1)[1]
    return [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in part.splitlines() if line.startswith("| ")][1:]


def _marks(rows: list[list[str]]) -> set[str]:
    """The footnote of every "–" cell; a "–" without one fails."""
    marks = set()
    for row in rows:
        for cell in row:
            if cell.startswith("–"):
                m = re.fullmatch(r"–(\d+)|– \[(\d+)\]", cell)
                assert m, f"a – without its reason: {row}"
                marks.add(m.group(1) or m.group(2))
    return marks


def _number_pair(cli, data, tmp_path) -> list:
    """Two runs of Already Said That (turns survived per chat) on the same 12 chats."""
    dirs = []
    for side in ("a", "b"):
        code, _, err = cli("run", "already_said_that:first-letters", "--model", "random",
                           "--n-samples", 12, "--data-dir", data, "--runs-dir", tmp_path / side,
                           "--no-cache")
        assert code == 0, err
        dirs += [m.parent for m in (tmp_path / side).rglob("manifest.json")]
    return dirs


def test_a_score_that_is_a_number_says_why_it_has_no_mcnemar_test(cli, shared_data, tmp_path):
    """Already Said That compares turns survived: its discordant and McNemar cells are "–",
    each pointing at the footnote that says why, on the page and in Markdown."""
    dirs = _number_pair(cli, shared_data("already_said_that"), tmp_path)
    page, _ = report(cli, *dirs, "--compare", *dirs, out=tmp_path / "r.html")
    (header, row) = tables_of(page)["data cmp-summary"]
    assert row[header.index("discordant")] == row[header.index("McNemar p")] == "–1", row
    assert row[header.index("items")] == "12"
    notes = _page_notes(page)
    assert list(notes) == ["1"] and notes["1"].startswith(
        "[1] – in already_said_that · first-letters (random (direct) vs random (direct)): "
        "turns survived is a number per item, not right/wrong: McNemar's test (discordant "
        "items, p) does not apply")
    assert '<a href="#cmp-note-1">1</a>' in page  # the mark links to its footnote
    assert data_of(page)["comparisons"][0]["blank"] == notes["1"].partition("): ")[2]
    md, _ = report(cli, *dirs, "--compare", *dirs, out=tmp_path / "r.md")
    (row,) = _md_rows(md)
    assert row[-1] == "– [1]" and _marks([row]) == {"1"}
    assert "[1] – in already\\_said\\_that · first-letters" not in md  # a word's _ stays
    assert "[1] – in already_said_that · first-letters" in md and "McNemar's test" in md


@pytest.mark.slow  # three reports of every session run
def test_too_few_items_and_runs_left_out_say_why(cli, report_runs, tmp_path):
    """Too few shared items: the page says so in the row, Markdown marks its "–" cells with a
    footnote. A run of A that B has no like-for-like run of is named, with why."""
    runs = report_runs.root / "runs"
    # random also ran WorldSense with another prompting: test-model has no such run
    code, _, err = cli("run", "worldsense:fresh", "--model", "random", "--limit", 60,
                       "--prompting", "direct", "--runs-dir", tmp_path / "runs", "--no-cache")
    assert code == 0, err
    (direct,) = {m.parent for m in (tmp_path / "runs").rglob("manifest.json")}
    args = (runs, direct, "--compare", "random", report_runs.label)
    page, _ = report(cli, *args, out=tmp_path / "r.html")
    text = " ".join(unescape(re.sub(r"<[^>]+>", " ", page)).split())
    assert ("not compared: random's worldsense · fresh (prompting=direct): test-model's runs "
            "of it differ: setting prompting=basic (only like-for-like runs are compared)"
            in text)
    assert _marks(tables_of(page)["data cmp-summary"][1:]) <= set(_page_notes(page))
    md, _ = report(cli, *args, out=tmp_path / "r.md")
    rows = _md_rows(md)
    assert all(f"[{m}] – in " in md for m in _marks(rows))
    assert "not compared: random's worldsense · fresh (prompting=direct)" in md
    if report_runs.ast:  # random ran every variant, test-model one: five shared chats
        assert "test-model has no run of already_said_that · distractorless" in md
        (row,) = [r for r in rows if r[0].startswith("already")]
        assert row[-2] == row[-1] == "– [1]", row
        assert "[1] – in already_said_that · first-letters" in md
        assert "too little overlap: only 5 shared item(s)" in md

    # no shared item at all: said with the counts, not as a bare "–"
    few = tmp_path / "few"
    shutil.copytree(report_runs.of("worldsense")[0], few)
    lines = (few / "records.jsonl").read_text().splitlines(keepends=True)
    (few / "records.jsonl").write_text("".join(lines[:3]))
    other = report_runs.of("worldsense")[1]
    md, _ = report(cli, other, few, "--compare", other, few, out=tmp_path / "few.md")
    (row,) = _md_rows(md)
    assert row[-2] == row[-1] == "– [1]", row
    assert "[1] – in worldsense · fresh" in md and "too little overlap: only 3 shared" in md


@pytest.mark.slow
@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(),
                    reason="headless test needs /usr/bin/chromium (apt-get install -y chromium)")
@pytest.mark.parametrize("width", [1280, 390])
def test_the_footnotes_fit_the_page(cli, shared_data, tmp_path, width):
    """Measured in headless Chromium: the marked cells and the footnotes under the table stay
    inside the page, on a desktop and on a phone (a wide table scrolls in its own box)."""
    from test_report_browser import measure_layout

    dirs = _number_pair(cli, shared_data("already_said_that"), tmp_path)
    page, _ = report(cli, *dirs, "--compare", *dirs, out=tmp_path / "r.html")
    got = measure_layout(tmp_path, page, width=width)
    assert got["innerWidth"] == got["scrollWidth"] == width, got
    assert [p for p in got["problems"] if p["kind"] != "table scrolls"] == [], got["problems"]
