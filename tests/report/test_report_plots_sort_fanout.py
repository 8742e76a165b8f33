"""SORT and FanOutQA get their own plots: accuracy by condition and distance (in-context vs
no-context side by side) and loose accuracy by fan-out width."""

from __future__ import annotations

import re


def test_sort_report_contrasts_contexts(cli, tmp_path, shared_data):
    data = shared_data("sort")
    for ctx in ("in-context", "no-context"):
        code, _, err = cli("run", "sort:250-20", "--model", "random", "--data-dir", data,
                           "--books", "73017", "--limit", 12, "--condition", ctx,
                           "--runs-dir", tmp_path / "runs")
        assert code == 0, err
    out = tmp_path / "r.html"
    code, _, err = cli("report", "--runs-dir", tmp_path / "runs", "--out", out)
    assert code == 0, err
    labels = re.findall(r'aria-label="([^"]*)"', out.read_text())
    assert "SORT accuracy by condition, in-context vs no-context (95% CI)" in labels
    assert "SORT accuracy by distance between the segments (95% CI)" in labels
    html = out.read_text()
    assert "random · in-context" in html and "random · no-context" in html


def test_fanoutqa_plot_by_fanout_width():
    import pandas as pd

    from mindprobe.core.results import Results
    from mindprobe.core.store import Run
    from mindprobe.registry import get_benchmark

    res = Results("fanoutqa")
    res.add_table("by_fanout", pd.DataFrame([
        {"fanout": "5", "n": 10, "loose": 0.5, "loose_ci_low": 0.3, "loose_ci_high": 0.7},
        {"fanout": "6", "n": 8, "loose": 0.4, "loose_ci_low": 0.2, "loose_ci_high": 0.6}]),
        index=False)
    run = Run(dir=None, manifest={"variant": "closedbook", "model_label": "m"}, records=[])
    svg = get_benchmark("fanoutqa").plots([run], [res])
    assert len(svg) == 1 and "fan-out" in svg[0] and svg[0].startswith("<svg")
