"""The report's words say what its numbers are (issue #43): each read from the rendered page."""

from __future__ import annotations

import html as html_module
import re
from pathlib import Path

from report_helpers import report


def rendered_text(page: str) -> str:
    """The page's text as a reader sees it: no tags, no scripts or styles, entities decoded."""
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    return " ".join(html_module.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def test_worldsense_bias_is_defined_as_it_is_computed(cli, tmp_path: Path):
    """+1 for TRUE/POSSIBLE/1/2, −1 for FALSE/IMPOSSIBLE/3 (metrics._BIAS), not "first option
    minus others"."""
    runs = tmp_path / "runs"
    code, _, err = cli("run", "worldsense:fresh", "--model", "random", "--limit", 20,
                       "--runs-dir", runs)
    assert code == 0, err
    text = rendered_text(report(cli, runs, out=tmp_path / "r.html")[0])
    assert "first option" not in text and "first answer option" not in text
    assert ("b = +1 for TRUE, POSSIBLE, 1, 2 and −1 for FALSE, IMPOSSIBLE, 3 (0 for an invalid "
            "reply)") in text


def test_the_sample_records_given_as_a_data_file_are_labelled_sample(cli, shared_data,
                                                                     tmp_path: Path):
    """`-O mr_gsm8k.data_file=…/sample_records.jsonl` (the offline way of a profile) runs the
    40 sample records: labelled `sample`, never the official `full` 3,000."""
    sample = shared_data("mr_gsm8k") / "sample_records.jsonl"
    runs = tmp_path / "runs"
    code, _, err = cli("run", "mr_gsm8k", "--model", "random", "--data-file", sample,
                       "--data-dir", sample.parent, "--runs-dir", runs)
    assert code == 0, err
    assert [p.name for p in (runs / "mr_gsm8k").iterdir()] == ["sample"]
    text = rendered_text(report(cli, runs, out=tmp_path / "r.html")[0])
    assert "random · sample · 0shot" in text
    assert "full · 0shot" not in text and "mr_gsm8k:full" not in text


def test_a_column_showing_one_task_of_five_says_so(cli, shared_data, tmp_path: Path):
    """Already Said That's five tasks are five runs: the profile shows one and says it is one
    of five (each is in the benchmark's section)."""
    from report_helpers import tables_of

    data = shared_data("already_said_that").parent
    runs = tmp_path / "runs"
    code, _, err = cli("run", "already_said_that:all", "--model", "random", "--n-samples", 2,
                       "--data-dir", data, "--runs-dir", runs)
    assert code == 0, err
    profile = tables_of(report(cli, runs, out=tmp_path / "r.html")[0])["profile"]
    assert "(1 of 5 variants run; each below)" in profile[0][1]
    assert "(1 of 5 variants run; each below)" in profile[1][1]
