"""The curated profile: failed runs listed as failed (never a score of 0), unreadable runs
listed with the reason, sweep validation runs never a headline, and chart text measured."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from report_helpers import data_of, report, tables_of

from mindprobe.benchmarks.sort.task import SortBenchmark
from mindprobe.report.svgtext import fit, text_width, wrap


def _copy(src, dst, **manifest):
    shutil.copytree(src, dst)
    m = json.loads((dst / "manifest.json").read_text())
    m.update(manifest)
    (dst / "manifest.json").write_text(json.dumps(m))
    return dst


def test_failed_and_unreadable_runs_are_listed(cli, report_runs, tmp_path):
    ws = report_runs.of("worldsense")
    runs = tmp_path / "runs"
    for d in ws:
        shutil.copytree(d, runs / d.name)
    failed = _copy(ws[0], runs / "failed", model_label="broken-model", status="failed")
    recs = [json.loads(x) for x in (failed / "records.jsonl").read_text().splitlines()]
    (failed / "records.jsonl").write_text("".join(
        json.dumps({"id": r["id"], "error": "HTTP 500 from the server"}) + "\n" for r in recs))
    bad = runs / "corrupt"
    bad.mkdir()
    (bad / "manifest.json").write_text("{not json")
    html, err = report(cli, "--runs-dir", runs, out=tmp_path / "r.html")
    assert "corrupt" in err
    profile = tables_of(html)["profile"]
    rows = {r[0]: r for r in profile[1:]}
    assert rows["broken-model"][1] == "—"  # failed: not scored, and not a 0
    assert "Failed runs (not scored)" in html
    assert f"the run failed: all {len(recs)} items ended in errors" in html
    assert "Runs that could not be read" in html and "runs/corrupt" in html
    assert str(bad) not in html  # named from its runs folder, no path of this machine
    assert any(r["model"] == "broken-model" for r in data_of(html)["runs"])


def test_sweep_validation_runs_are_never_a_headline():
    bench = SortBenchmark()
    assert bench.setting_rank("all", {"prompting": "prompt_0-in-context-ordering-validation"}) \
        is None
    assert bench.setting_rank("all", {"prompting": "prompt_3-in-context-ordering"}) == 0
    assert bench.setting_rank("all", {"prompting": "prompt_0-no-context-ordering"}) == 1


def test_text_measure_fit_and_wrap():
    assert text_width("mmmm", 10) > text_width("iiii", 10)
    assert text_width("abc", 13, bold=True) > text_width("abc", 13)
    label = "gemma-3-270m-q4_k_m · in-context · prompt_0"
    short = fit(label, 80, 11)
    assert short.endswith("…") and text_width(short, 11) <= 80
    assert fit("short", 80, 11) == "short"
    lines = wrap("WorldSense test_set · basic: accuracy by problem (95% CI)", 200, 13, True)
    assert len(lines) >= 2 and all(text_width(x, 13, True) <= 200 for x in lines)


def test_mr_gsm8k_legacy_seed_table_is_no_published_source(tmp_path):
    """The seed README's January 2024 table (other prompts, legacy protocol) is not read: only
    upstream's README at the pinned commit is, verified by its sha256."""
    import shutil

    import pytest

    from mindprobe.benchmarks.mr_gsm8k.task import MRGSM8KBenchmark
    from mindprobe.errors import DataError

    seeds = Path(__file__).resolve().parents[2].parent / "shared" / "seeds"
    if not (seeds / "mr_gsm8k_README.md").is_file():
        pytest.skip(f"no MR-GSM8K README copy in {seeds}")
    with pytest.raises(DataError, match="data fetch mr_gsm8k"):
        MRGSM8KBenchmark().published([seeds], print)
    (tmp_path / "upstream").mkdir()
    shutil.copy(seeds / "mr_gsm8k_README.md", tmp_path / "upstream" / "README.md")
    with pytest.raises(DataError, match="does not match the official file"):
        MRGSM8KBenchmark().published([tmp_path], print)


def test_profile_heads_state_the_majority_answer_baseline(cli, report_runs, tmp_path):
    """A closed-answer benchmark's column head gives chance and the majority-answer baseline
    (the score of always giving the more frequent right answer), computed from the run."""
    html, _ = report(cli, "--runs-dir", report_runs.root / "runs", out=tmp_path / "r.html")
    head = tables_of(html)["profile"][0]
    ws = next(h for h in head if h.startswith("worldsense") or "worldsense" in h)
    assert "chance" in ws and "majority answer" in ws, head
