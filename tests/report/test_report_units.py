"""The report's small parts: SVG charts, plot hooks, paired statistics, prices."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mindprobe.benchmarks.already_said_that.options import AlreadySaidThatOptions
from mindprobe.core.options import NoOptions
from mindprobe.core.plan import RunPlan
from mindprobe.core.results import Headline, Results
from mindprobe.core.stats import paired_bootstrap
from mindprobe.errors import UsageError
from mindprobe.registry import get_benchmark
from mindprobe.report.compare import mcnemar
from mindprobe.report.plots import generic_plots, plots_for, survival, table_series
from mindprobe.report.provenance import parse_price
from mindprobe.report.svg import Line, Series, bar_chart, interval_chart, line_chart, nice_ticks


class FakeRun:
    def __init__(self, model: str, variant: str = "v", records=None, options=None) -> None:
        self.model_label, self.variant, self.prompting = model, variant, "basic"
        self.records, self.manifest = records or [], {}
        self.options = options if options is not None else NoOptions()

    def plan(self) -> RunPlan:
        return RunPlan(items=[], prompting=self.prompting, options=self.options)


def test_nice_ticks():
    assert nice_ticks(0, 1) == [0, 0.2, 0.4, 0.6000000000, 0.8, 1.0]
    assert nice_ticks(0, 100) == [0, 20, 40, 60, 80, 100]
    assert nice_ticks(-1, 1)[0] == -1 and nice_ticks(-1, 1)[-1] == 1


def test_bar_chart_escapes_and_marks_missing():
    svg = bar_chart(["<b>x</b>", "y"], [Series("m<1>", [0.5, None], [0.4, None], [0.6, None])],
                    title="a & b", refs=[(0.5, "chance")])
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert "<b>" not in svg and "&lt;b&gt;x&lt;/b&gt;" in svg and "a &amp; b" in svg
    assert "n/a" in svg  # a missing value is not drawn as zero
    assert "stroke-dasharray" in svg  # the chance line
    assert "xmlns" not in svg and "http" not in svg


def test_line_and_interval_charts():
    xs, ys = survival([0, 1, 1, 3], 4)
    assert ys == [1.0, 0.75, 0.25, 0.25, 0.0]
    svg = line_chart([Line("m", xs, ys)], title="t", x_label="turn", y_range=(0, 1), step=True)
    assert "<path" in svg and "turn" in svg
    svg = interval_chart(["a-very-long-model-name-indeed-too-long", "b"], [0.5, None],
                         [0.4, None], [0.6, None], refs=[(0.5, "chance")])
    assert "— not run" in svg and "<title>a-very-long-model-name-indeed-too-long</title>" in svg


def test_generic_plot_from_any_value_table():
    res = Results("newbench")
    frame = pd.DataFrame({"cell": ["a", "b"], "n": [10, 12], "score": [0.4, 0.7],
                          "score ±95": [0.1, 0.05]})
    res.add_table("scores", frame, "Scores", index=False)
    res.add_table("text", pd.DataFrame({"k": ["x"], "v": ["y"]}), index=False)
    cats, series, _ = table_series(res.tables["scores"], "m")
    assert cats == ["a", "b"] and series.values == [0.4, 0.7]
    assert series.lows == pytest.approx([0.3, 0.65]) and series.highs == pytest.approx([0.5, 0.75])
    svgs = generic_plots([FakeRun("m1"), FakeRun("m2")], [res, res])
    assert len(svgs) == 1 and "m1" in svgs[0] and "m2" in svgs[0]
    assert plots_for("newbench", [FakeRun("m")], [res])  # unknown benchmarks: generic only


def test_every_built_in_benchmark_draws_its_own_plots():
    for name in ("worldsense", "already_said_that", "mr_gsm8k", "sort", "fanoutqa"):
        bench = get_benchmark(name)
        assert bench.plotted_tables and bench.plots([], []) == []


def test_hooks_draw_from_results():
    ws = Results("worldsense")
    ws.add_table("accuracy/basic/m", pd.DataFrame({
        "problem": ["ALL", "Infer.trivial"], "accuracy": [55.0, 60.0], "ci_low": [52.0, 55.0],
        "ci_high": [58.0, 65.0], "bias": [0.1, -0.2], "bias ±95": [0.05, 0.1]}), index=False)
    ws.add_table("chance", pd.DataFrame({"problem": ["ALL", "Infer.trivial"],
                                         "chance": [0.5, 0.5]}), index=False)
    recs = [{"problemname": "Infer.trivial", "expectedresp": ["TRUE", "FALSE"]}]
    svgs = get_benchmark("worldsense").plots([FakeRun("m", "fresh", recs)], [ws])
    assert len(svgs) == 2 and "accuracy by problem" in svgs[0] and "bias" in svgs[1]
    assert "chance (uniform guess, paper&#x27;s scoring)" in svgs[0] or \
        "chance (uniform guess, paper's scoring)" in svgs[0]
    mr = Results("mr_gsm8k")
    mr.add_table("metrics", pd.DataFrame([{"scope": "all", "n": 4, "TPR": 50.0, "TNR": 25.0,
                                           "Step": 10.0, "S+R": None, "MR-Score": 3.0}]),
                 index=False)
    assert "S+R" in get_benchmark("mr_gsm8k").plots([FakeRun("m")], [mr])[0]
    ast = Results("already_said_that", headline=Headline("avg_num_turns", 2.0, 1.0, 3.0))
    runs = [FakeRun("m", "first-letters", [{"num_turns": 1}, {"num_turns": 3}],
                    AlreadySaidThatOptions(max_turns=3))]
    svgs = get_benchmark("already_said_that").plots(runs, [ast])
    assert len(svgs) == 2 and "still going" in svgs[1]


def test_paired_bootstrap_and_mcnemar():
    rng = np.random.default_rng(1)
    a = (rng.random(400) < 0.7).astype(float)
    b = (rng.random(400) < 0.5).astype(float)
    d = a - b
    lo, hi = paired_bootstrap(d)
    assert lo < d.mean() < hi
    assert paired_bootstrap(d) == (lo, hi)  # seeded
    se = d.std(ddof=1) / np.sqrt(len(d))
    assert lo == pytest.approx(d.mean() - 1.96 * se, abs=0.015)
    assert hi == pytest.approx(d.mean() + 1.96 * se, abs=0.015)
    cont = rng.normal(size=300)  # many distinct values: the index-resampling path
    lo, hi = paired_bootstrap(cont)
    se = cont.std(ddof=1) / np.sqrt(len(cont))
    assert lo == pytest.approx(cont.mean() - 1.96 * se, abs=0.03)
    p, chi2, p_chi2 = mcnemar(30, 12)
    assert p == pytest.approx(stats.binomtest(12, 42, 0.5).pvalue)
    assert chi2 == pytest.approx((18 - 1) ** 2 / 42) and p_chi2 == pytest.approx(
        stats.chi2.sf(chi2, 1))
    assert mcnemar(0, 0) == (1.0, 0.0, 1.0)


def test_parse_price():
    assert parse_price(None) is None
    p = parse_price("2.5,10")
    assert (p.prompt, p.completion) == (2.5, 10.0)
    assert p.cost({"prompt_tokens": 1_000_000, "completion_tokens": 100_000}) == 3.5
    assert parse_price("3").completion == 3.0
    for bad in ("x", "1,2,3", "-1,2", ""):
        with pytest.raises(UsageError):
            parse_price(bad)


def test_the_page_style_and_script_ship_as_package_data():
    """report.css / report.js are read with importlib.resources, so the wheel must carry them."""
    import tomllib
    from pathlib import Path

    from mindprobe.report import assets

    root = Path(__file__).resolve().parents[2]
    listed = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]["mindprobe.report"]
    files = {p.name for p in (root / "src" / "mindprobe" / "report").iterdir()
             if p.suffix in (".css", ".js")}
    assert files == set(listed) == {"report.css", "report.js"}
    assert "th.orderable" in assets.CSS and "aria-sort" in assets.JS
