"""Offline paths and skipped benchmarks (issue #43): every "missing data" line names both ways
out in one short line; a plan with nothing to run is an error; a profile's final table,
profile.json and report list every planned benchmark, the ones that did not run with their
reason, their fix and their published rows."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mindprobe.report.collect import NotRun


@pytest.fixture(autouse=True)
def wide(monkeypatch):
    """A wide terminal: each note of the plan is one line, as written."""
    monkeypatch.setenv("COLUMNS", "1000")


def _notes(err: str) -> dict[str, str]:
    """The plan's notes by benchmark (a note is an indented line)."""
    out: dict[str, str] = {}
    for line in err.splitlines():
        if not line.startswith("  "):
            continue
        name, _, rest = line.strip().partition(": ")
        out.setdefault(name, "")
        out[name] += rest + "\n"
    return out


def test_a_plan_without_data_says_both_ways_out_and_exits_2(cli, tmp_path):
    empty = tmp_path / "data"
    empty.mkdir()
    code, _, err = cli("profile", "--model", "random", "--size", "quick", "--dry-run",
                       "--data-dir", empty, "--runs-dir", tmp_path / "runs")
    assert code == 2, err  # nothing of the profile can run: the plan said why, and an error
    assert "Traceback" not in err and f"looked in {empty}" in err
    notes = _notes(err)
    for name in ("worldsense", "already_said_that", "sort", "fanoutqa", "mr_gsm8k"):
        line = next(n for n in notes[name].splitlines() if n.startswith("missing data"))
        assert str(empty / name) in line  # the folder it looked in
        assert f"`mindprobe data fetch {name}`" in line and "--data-dir DIR" in line, line
    mr = next(n for n in notes["mr_gsm8k"].splitlines() if n.startswith("missing data"))
    assert "-O mr_gsm8k.data_file=PATH" in mr and len(mr) < 300, mr  # one short line
    summary = notes["missing data"]
    assert "`mindprobe data fetch already_said_that fanoutqa mr_gsm8k sort worldsense`" in summary
    assert "--data-dir DIR" in summary


@pytest.mark.slow
def test_the_offline_fix_names_the_sample_where_it_is(cli, shared_data, tmp_path):
    """With the data root of the checkout, MR-GSM8K's line names the very file to pass."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "mr_gsm8k").symlink_to(shared_data("mr_gsm8k"))
    (root / "worldsense").symlink_to(shared_data("worldsense"))
    code, _, err = cli("profile", "--model", "random", "--size", "quick", "--dry-run",
                       "--data-dir", root, "--runs-dir", tmp_path / "runs")
    assert code == 0, err
    mr = _notes(err)["mr_gsm8k"]
    assert f"-O mr_gsm8k.data_file={root / 'mr_gsm8k' / 'sample_records.jsonl'}" in mr


@pytest.mark.slow
def test_a_random_profile_lists_what_did_not_run_with_its_fix_and_published_rows(
        cli, shared_data, tmp_path, monkeypatch):
    """FanOutQA cannot run on `random` (free text) and MR-GSM8K lacks its official file: both
    stay in the final table, profile.json and the report, with reason, fix and FanOutQA's 16
    published systems of the closed-book setting."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "report"))
    from report_helpers import tables_of
    from test_report_words import rendered_text

    root = tmp_path / "root"
    root.mkdir()
    for name in ("worldsense", "fanoutqa"):
        (root / name).symlink_to(shared_data(name))
    code, doc, err = cli("profile", "--model", "random", "--size", "quick", "--data-dir", root,
                         "--runs-dir", tmp_path / "runs", "--json")
    assert code == 0, err  # what could run finished; the rest is listed, with its fix
    skipped = {s["benchmark"]: s for s in doc["not_run"]}
    assert set(skipped) == {"already_said_that", "fanoutqa", "mr_gsm8k", "sort"}
    assert skipped["fanoutqa"]["status"] == "cannot run"
    assert "free text" in skipped["fanoutqa"]["reason"]
    assert "-O mr_gsm8k.data_file=" in skipped["mr_gsm8k"]["fix"]
    table = " ".join(re.sub(r"[│┃]", " ", err).split())
    assert "fanoutqa closedbook not run" in table and "mr_gsm8k full not run" in table
    assert "fanoutqa: not run (cannot run): FanOutQA needs answers in free text" in table
    import mindprobe

    again = mindprobe.profile("random", size="quick", data_dir=root, runs_dir=tmp_path / "runs",
                              progress=False)  # the library: finished, nothing re-run
    assert [s["benchmark"] for s in again.not_run] == [s["benchmark"] for s in doc["not_run"]]
    folder = Path(doc["profile"])
    manifest = json.loads((folder / "profile.json").read_text())["benchmarks"]
    assert set(manifest) == {"worldsense", "already_said_that", "mr_gsm8k", "sort", "fanoutqa"}
    assert manifest["fanoutqa"]["status"] == "cannot run" and manifest["fanoutqa"]["fix"]
    assert "mindprobe data fetch mr_gsm8k" in manifest["mr_gsm8k"]["fix"]
    page = (folder / "report.html").read_text(encoding="utf-8")
    assert "<data cache>" not in page  # a scrubbed path is text, not a tag
    profile = tables_of(page)["profile"]
    head = profile[0]
    col = next(i for i, h in enumerate(head) if h.startswith("fanoutqa"))
    assert "not run" in head[col] and "closedbook" in head[col]
    assert next(r for r in profile if r[0] == "random")[col] == "not run"
    published = [r for r in profile if "published" in r[0] and "closedbook" in r[col]]
    assert len(published) == 16
    text = rendered_text(page)
    assert "Planned but not run in this profile" in text
    assert re.search(r"fanoutqa ?: cannot run: FanOutQA needs answers in free text", text)
    assert re.search(r"mr_gsm8k ?: missing data: \S+/MR-GSM8K.json — fix: `mindprobe data "
                     r"fetch mr_gsm8k`, --data-dir DIR or -O mr_gsm8k.data_file=", text)
    assert "fanoutqa: not run; published results (setting=closedbook)" in text


def test_the_report_of_runs_alone_is_unchanged(cli, tmp_path):
    """Without a profile's list, nothing is said to be "not run"."""
    assert NotRun("r", "f").text() == "r — fix: f"
    runs = tmp_path / "runs"
    code, _, err = cli("run", "worldsense:fresh", "--model", "random", "--limit", 8,
                       "--runs-dir", runs)
    assert code == 0, err
    code, _, err = cli("report", runs, "--out", tmp_path / "r.html")
    assert code == 0, err
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "Planned but not run" not in page and "not run; published results" not in page


@pytest.mark.parametrize("bench", ["worldsense", "already_said_that", "mr_gsm8k", "sort",
                                   "fanoutqa"])
@pytest.mark.parametrize("given", [True, False])
def test_every_missing_data_message_names_both_ways_out(cli, tmp_path, monkeypatch, bench,
                                                        given):
    """`run` without data: the folder it looked in, `mindprobe data fetch BENCH` and
    `--data-dir`, whether a --data-dir was given or the data cache was read."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("MINDPROBE_DATA_DIR", str(cache))
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = cli("run", bench, "--model", "random", "--runs-dir", tmp_path / "runs",
                       *(["--data-dir", empty] if given else []))
    assert code == 2 and "Traceback" not in err, err
    text = " ".join(err.split())
    assert str(empty if given else cache / bench) in text
    assert f"mindprobe data fetch {bench}" in text and "--data-dir" in text, text


def test_published_without_data_names_data_dir_and_no_data_less_plugin(cli, tmp_path,
                                                                       monkeypatch):
    monkeypatch.setenv("MINDPROBE_DATA_DIR", str(tmp_path / "cache"))
    code, _, err = cli("published")
    assert code == 2, err
    text = " ".join(err.split())
    assert "--data-dir DIR" in text and str(tmp_path / "cache") in text
    assert "`mindprobe data fetch fanoutqa mr_gsm8k worldsense`" in text
