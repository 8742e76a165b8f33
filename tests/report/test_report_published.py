"""Published rows in the report: only those of the run's setting (MR-GSM8K k=0 beside a 0-shot
run, FanOutQA closed-book beside closed-book), labelled where their data differs, with where the
run stands; and a report names no absolute path of the machine that made it."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from mindprobe.cli import main
from mindprobe.testing import TestServer

REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = Path(os.environ.get("MINDPROBE_SHARED_DATA", REPO.parent / "shared" / "data"))


def _k0_models() -> dict[str, str]:
    """Model -> MR-Score k=0 as upstream's README prints it (parsed here on its own)."""
    lines = (SHARED_DATA / "mr_gsm8k" / "upstream" / "README.md").read_text().splitlines()
    table = [ln for ln in lines[lines.index("## Evaluation results"):] if ln.startswith("|")]
    head = [c.strip() for c in table[0].strip("|").split("|")]
    out = {}
    for ln in table[2:]:
        cells = [c.strip() for c in ln.strip().strip("|").split("|")]
        if len(cells) == len(head):
            out[cells[0]] = cells[head.index("MR-Score k=0")]
    return out


@pytest.fixture
def fetched(monkeypatch):
    """The data cache holds the official files (as after `mindprobe data fetch`)."""
    if not (SHARED_DATA / "mr_gsm8k" / "upstream" / "README.md").is_file():
        pytest.skip(f"no upstream README in {SHARED_DATA / 'mr_gsm8k'}")
    monkeypatch.setenv("MINDPROBE_DATA_DIR", str(SHARED_DATA))


def _md(cli, tmp_path, *args) -> str:
    out = tmp_path / "r.md"
    code, _, err = cli("report", *args, "--format", "md", "--out", out)
    assert code == 0, err
    return out.read_text(encoding="utf-8")


def test_a_zero_shot_mr_gsm8k_run_shows_the_14_k0_rows_and_no_legacy_row(
        cli, report_runs, fetched, tmp_path):
    if not report_runs.mr:
        pytest.skip("no MR-GSM8K runs (shared data absent)")
    text = _md(cli, tmp_path, *report_runs.of("mr_gsm8k"))
    rows = dict(re.findall(r"^\| (.+?) \(published, mr_gsm8k\) \| ([^|]*)\|", text, re.M))
    expected = _k0_models()
    assert len(expected) == 14 and set(rows) == set(expected)
    for model, score in expected.items():
        assert rows[model].strip().startswith(f"{score}%"), (model, rows[model])
        assert "shots=0" in rows[model] and "the official 3,000 solutions" in rows[model]
    assert "shots=3" not in text.split("## mr_gsm8k")[0]  # k=3 rows never in the profile
    assert "published results (shots=0)" in text and "(shots=3)" not in text
    for legacy in ("Claude2", "GPT3-5", "WizardMath-70B", "MR-Score/A"):
        assert legacy not in text
    assert "Where you stand" in text and "rank " in text and "between " in text


@pytest.fixture(scope="module")
def fanoutqa_run(tmp_path_factory):
    data = SHARED_DATA / "fanoutqa"
    if not (data / "leaderboard" / "results").is_dir():
        pytest.skip(f"no FanOutQA leaderboard files in {data}")
    root = tmp_path_factory.mktemp("fq")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MINDPROBE_CACHE_DIR", str(root / "cache"))
        mp.setenv("MINDPROBE_DATA_DIR", str(SHARED_DATA))
        with TestServer(responder=lambda body: "Paris") as srv:
            code = main(["run", "fanoutqa", "--model", f"openai:test-model@{srv.base_url}",
                         "--limit", "3", "--data-dir", str(data), "--runs-dir",
                         str(root / "runs"), "--no-cache"])
    assert code == 0
    return root / "runs"


def test_a_fanoutqa_dev_run_shows_the_leaderboard_of_its_setting_labelled(
        cli, fanoutqa_run, fetched, tmp_path):
    text = _md(cli, tmp_path, fanoutqa_run)
    rows = re.findall(r"^\| (.+?) \(published, fanoutqa\) \| ([^|]*)\|", text, re.M)
    assert len(rows) == 16
    for _, cell in rows:
        assert "setting=closedbook" in cell
        assert "test split, Nov 2023 release, hidden answers" in cell
    section = text.split("### fanoutqa: published results", 1)[1]
    assert section.startswith(" (setting=closedbook)") and "openbook" not in section.split(
        "###")[0]
    assert "gpt-4o-2024-11-20" in section and "gpt-4-0613" in section  # the judge column
    assert "never item by item" in section and "Where you stand" in section


@pytest.mark.slow
def test_no_report_names_a_path_of_the_machine(cli, report_runs, fanoutqa_run, fetched,
                                               tmp_path):
    runs = [*report_runs.of("mr_gsm8k"), *report_runs.of("worldsense"), fanoutqa_run]
    html = tmp_path / "r.html"
    code, _, err = cli("report", *runs, "--out", html)
    assert code == 0, err
    for page in (html.read_text(encoding="utf-8"), _md(cli, tmp_path, *runs)):
        for local in {str(report_runs.root), str(fanoutqa_run.parent), str(SHARED_DATA),
                      str(SHARED_DATA.resolve()), str(tmp_path)}:
            assert local not in page
        assert "facebookresearch/worldsense@" in page or not report_runs.of("worldsense")
    data = json.loads(re.search(r'id="mindprobe-data">(.*?)</script>',
                                html.read_text(encoding="utf-8"), re.S).group(1))
    assert all(not r["dir"].startswith("/") for r in data["runs"])


def test_benchmarks_without_published_results_say_so(cli, report_runs, fetched, tmp_path):
    if not report_runs.ast:
        pytest.skip("no Already Said That runs (shared data absent)")
    text = " ".join(_md(cli, tmp_path, *report_runs.of("already_said_that")).split())
    assert "publishes no machine-readable results" in text


def test_report_data_dir_root_finds_published_results(cli, shared_data, tmp_path):
    """`mindprobe report --data-dir ../shared/data` reads the published rows from that root
    (before, only the cache was searched and the report warned they were missing)."""
    mr = shared_data("mr_gsm8k")
    runs = tmp_path / "runs"
    code, _, err = cli("run", "mr_gsm8k:sample", "--model", "random", "--limit", "2",
                       "--data-dir", mr, "--runs-dir", runs)
    assert code == 0, err
    text = _md(cli, tmp_path, "--runs-dir", runs, "--data-dir", mr.parent)
    assert "(published, mr_gsm8k)" in text
