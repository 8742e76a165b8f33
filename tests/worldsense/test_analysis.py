"""WorldSense scoring against spec §3: the published README tables and the §3.7 worked example."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from ws_fixtures import NO_LINE, write_set

from mindprobe.benchmarks.worldsense import (
    accuracy_by_group,
    analyse,
    load_results,
    load_testset,
    pivot_pretty,
    read_results_file,
    render_text,
    to_json,
    write_results_file,
)
from mindprobe.benchmarks.worldsense.metrics import INCOMPLETE_WARNING
from mindprobe.benchmarks.worldsense.report import analyse_testset_dir

pytestmark = pytest.mark.slow  # a module-wide fixture costs tens of seconds

# --------------------------------------------------------------------------- published tables

# Spec §3.6 / seed README, verbatim (upstream `analyse_results.py -t data/worldsense/test_set`).
README_TABLES = """
--------------------------------------------------------------------------
    AVERAGE ACCURACY ACROSS ALL PROBLEMS (with 95% confidence interval)
--------------------------------------------------------------------------
prompting          basic
modelname
GPT3.5        55.6 (0.4)
GPT4          75.6 (0.4)
Llama2-chat   56.2 (0.3)
Llama2-FT+1M  77.4 (0.4)

--------------------------------------------------------------------------
    ACCURACY for each of the problems  (with 95% confidence interval)
--------------------------------------------------------------------------
problemname            Infer.trivial Infer.normal Consist.trivial Consist.normal Compl.trivial Compl.normal
prompting modelname
basic     GPT3.5          64.8 (1.1)   55.1 (0.6)      52.2 (0.7)     49.9 (0.7)    59.9 (1.0)   51.8 (1.0)
          GPT4            90.3 (0.7)   75.6 (0.6)      71.2 (0.6)     65.0 (0.6)    93.1 (0.6)   58.5 (0.7)
          Llama2-chat     62.2 (0.8)   59.1 (0.5)      54.2 (0.4)     49.4 (0.3)    60.5 (0.7)   51.5 (0.5)
          Llama2-FT+1M    79.7 (0.9)   80.6 (0.5)      54.9 (0.3)     52.8 (0.3)    98.5 (0.2)   97.8 (0.3)

--------------------------------------------------------------------------
    BIAS for each of the problems (with 95% confidence interval)
--------------------------------------------------------------------------
problemname            Infer.trivial  Infer.normal Consist.trivial Consist.normal Compl.trivial Compl.normal
prompting modelname
basic     GPT3.5         0.08 (0.02)  -0.34 (0.01)    -0.15 (0.01)   -0.00 (0.01)  -0.02 (0.02)  0.20 (0.02)
          GPT4          -0.14 (0.01)  -0.20 (0.01)    -0.12 (0.01)    0.00 (0.01)   0.09 (0.01)  0.78 (0.01)
          Llama2-chat   -0.43 (0.02)  -0.63 (0.01)     0.52 (0.01)    0.79 (0.01)   0.52 (0.02)  0.83 (0.01)
          Llama2-FT+1M   0.26 (0.02)   0.04 (0.01)     0.84 (0.01)    0.90 (0.01)  -0.02 (0.00)  0.02 (0.01)
"""

PROBLEMS = ["Infer.trivial", "Infer.normal", "Consist.trivial", "Consist.normal",
            "Compl.trivial", "Compl.normal"]
MODELS = ["GPT3.5", "GPT4", "Llama2-chat", "Llama2-FT+1M"]
OVERALL = {"GPT3.5": "55.6 (0.4)", "GPT4": "75.6 (0.4)", "Llama2-chat": "56.2 (0.3)",
           "Llama2-FT+1M": "77.4 (0.4)"}
ACCURACY = {
    "GPT3.5": "64.8 (1.1) 55.1 (0.6) 52.2 (0.7) 49.9 (0.7) 59.9 (1.0) 51.8 (1.0)",
    "GPT4": "90.3 (0.7) 75.6 (0.6) 71.2 (0.6) 65.0 (0.6) 93.1 (0.6) 58.5 (0.7)",
    "Llama2-chat": "62.2 (0.8) 59.1 (0.5) 54.2 (0.4) 49.4 (0.3) 60.5 (0.7) 51.5 (0.5)",
    "Llama2-FT+1M": "79.7 (0.9) 80.6 (0.5) 54.9 (0.3) 52.8 (0.3) 98.5 (0.2) 97.8 (0.3)",
}
BIAS = {
    "GPT3.5": "0.08 (0.02) -0.34 (0.01) -0.15 (0.01) -0.00 (0.01) -0.02 (0.02) 0.20 (0.02)",
    "GPT4": "-0.14 (0.01) -0.20 (0.01) -0.12 (0.01) 0.00 (0.01) 0.09 (0.01) 0.78 (0.01)",
    "Llama2-chat": "-0.43 (0.02) -0.63 (0.01) 0.52 (0.01) 0.79 (0.01) 0.52 (0.02) 0.83 (0.01)",
    "Llama2-FT+1M": "0.26 (0.02) 0.04 (0.01) 0.84 (0.01) 0.90 (0.01) -0.02 (0.00) 0.02 (0.01)",
}


def _cells(row: str) -> list[str]:
    parts = row.split()
    return [f"{parts[i]} {parts[i + 1]}" for i in range(0, len(parts), 2)]


_OFFICIAL: dict[str, tuple] = {}


@pytest.fixture
def official(shared_data):
    """The real test set and its 4 published results files, loaded and analysed once per run."""
    if "v" not in _OFFICIAL:
        testset = shared_data("worldsense") / "test_set"
        trials = load_testset(testset)
        results = load_results(testset)
        warnings: list[str] = []
        analysis = analyse(trials, results, warn=warnings.append)
        _OFFICIAL["v"] = (testset, trials, results, analysis, warnings)
    return _OFFICIAL["v"]


def test_testset_loader(official):
    _, trials, _, _, _ = official
    assert trials.shape == (87048, 17)
    assert list(trials.columns[:14]) == [
        "Key", "problemname", "tuple_ID", "text", "expectedresp", "span", "descr", "query",
        "objects", "problemsize", "skin", "qskin", "complexity", "query_len"]
    assert list(trials.columns[14:]) == ["goldresp", "EXPNAME", "EXP_i"]
    assert trials["Key"].dtype == np.int64
    assert trials["Key"].iloc[0] == -276741083417243227  # exact beyond float precision
    assert trials["Key"].is_unique
    assert (trials["EXPNAME"] == "test_set").all()
    assert (trials["EXP_i"].to_numpy() == np.arange(87048)).all()
    assert trials["goldresp"].value_counts().to_dict() == {
        "POSSIBLE": 20088, "IMPOSSIBLE": 20088, "TRUE": 13392, "FALSE": 13392,
        "1": 6696, "2": 6696, "3": 6696}
    assert trials["tuple_ID"].nunique() == 40176
    counts = trials.groupby(["problemname", "problemsize"]).size()
    assert counts["Infer.trivial"].tolist() == [2232] * 3
    assert counts["Compl.normal"].tolist() == [3348] * 3


def test_results_loader(official):
    _, _, results, _, _ = official
    assert results.shape == (348192, 4)
    assert results["Key"].dtype == np.int64
    assert sorted(results["modelname"].unique()) == sorted(MODELS)
    assert set(results["resp"].unique()) <= {"TRUE", "FALSE", "POSSIBLE", "IMPOSSIBLE",
                                             "1", "2", "3", ""}
    assert (results["resp"] == "").sum() == 15  # SOURCE.md: Llama2-chat's 15 empty answers


def test_readme_cells_and_order(official):
    _, _, _, analysis, warnings = official
    assert warnings == []
    overall = pivot_pretty(analysis.accuracy_overall, "modelname", "prompting")
    assert list(overall.index) == MODELS and list(overall.columns) == ["basic"]
    assert overall["basic"].to_dict() == OVERALL
    for table, expected in ((analysis.accuracy_by_problem, ACCURACY),
                            (analysis.bias_by_problem, BIAS)):
        pretty = pivot_pretty(table, ["prompting", "modelname"], "problemname")
        assert list(pretty.columns) == PROBLEMS
        assert list(pretty.index) == [("basic", m) for m in MODELS]
        for model in MODELS:
            assert pretty.loc[("basic", model)].tolist() == _cells(expected[model])
    assert (analysis.accuracy_overall["n"] == 20088).all()
    n_by_problem = analysis.accuracy_by_problem.groupby("problemname", observed=True)["n"]
    assert n_by_problem.unique().map(list).to_dict() == {  # 3 sizes × fewest tuples per size
        "Infer.trivial": [3348], "Infer.normal": [10044], "Consist.trivial": [10044],
        "Consist.normal": [10044], "Compl.trivial": [3348], "Compl.normal": [3348]}


def test_readme_text(official):
    testset, _, _, analysis, _ = official
    text = render_text(analysis, "data/worldsense/test_set")
    banner = "\n".join(["*" * 74, "*", "*  ANALYSING RESULTS OF TESTSET data/worldsense/test_set",
                        "*", "*" * 74, ""])
    assert text == banner + README_TABLES


def test_official_json(official):
    _, _, _, analysis, _ = official
    doc = to_json(analysis)
    assert list(doc) == ["accuracy", "bias"]
    assert list(doc["accuracy"]) == [f"basic/{m}" for m in MODELS]
    gpt4 = doc["accuracy"]["basic/GPT4"]
    assert list(gpt4) == ["ALL", *PROBLEMS]
    assert round(100 * gpt4["ALL"]["mean"], 1) == 75.6
    assert round(100 * gpt4["ALL"]["conf95"], 1) == 0.4
    assert round(doc["bias"]["basic/GPT4"]["Compl.normal"]["mean"], 2) == 0.78
    json.dumps(doc, allow_nan=False)


def test_partial_file_warns_and_widens_ci(official, tmp_path, capsys):
    _, trials, results, analysis, _ = official
    gpt4 = results[results["modelname"] == "GPT4"]
    half = gpt4.iloc[: len(gpt4) // 2]
    path = tmp_path / "basic___GPT4___results.jsonl"
    write_results_file(path, zip(half["Key"].tolist(), half["resp"].tolist(), strict=True))
    partial = analyse(trials, read_results_file(path))  # default sink: stderr, never stdout
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines()[0] == ("    *** !!! [WARNING] PARTIAL RESULTS FILE: "
                                   "number of rows 43524 differs from 87048")
    full = analysis.accuracy_overall.set_index("modelname").loc["GPT4"]
    part = partial.accuracy_overall.iloc[0]
    assert part["n"] < full["n"]
    assert part["conf95"] > full["conf95"]


def test_compl_only_file_scores_as_strings(official, tmp_path):
    """Upstream's reader turned an all-numeric file into ints that all scored wrong; not here."""
    _, trials, results, analysis, _ = official
    compl_keys = trials.loc[trials["problemname"].str.startswith("Compl"), "Key"]
    gpt4 = results[(results["modelname"] == "GPT4") & results["Key"].isin(compl_keys)]
    path = tmp_path / "basic___GPT4___results.jsonl"
    write_results_file(path, zip(gpt4["Key"].tolist(), gpt4["resp"].tolist(), strict=True))
    only = read_results_file(path)
    assert set(only["resp"]) == {"1", "2", "3"}
    sub = analyse(trials, only, warn=lambda _: None)
    pretty = pivot_pretty(sub.accuracy_by_problem, ["prompting", "modelname"], "problemname")
    assert pretty.loc[("basic", "GPT4")].tolist() == ["93.1 (0.6)", "58.5 (0.7)"]


# --------------------------------------------------------------------------- synthetic sets

# Spec §3.7: t1..t10, gold→resp.
WORKED = [
    ("Infer.normal", 3, [("TRUE", "TRUE"), ("FALSE", "FALSE")]),
    ("Infer.normal", 3, [("TRUE", "TRUE"), ("FALSE", "TRUE")]),
    ("Infer.normal", 4, [("TRUE", "FALSE"), ("FALSE", "FALSE")]),
    ("Infer.normal", 4, [("TRUE", "FALSE"), ("FALSE", "TRUE")]),
    ("Infer.normal", 4, [("TRUE", "TRUE"), ("FALSE", "FALSE")]),
    ("Compl.normal", 3, [("1", "2"), ("2", "2"), ("3", "1")]),
    ("Compl.normal", 3, [("1", "3"), ("2", ""), ("3", "3")]),
    ("Compl.normal", 4, [("1", "1"), ("2", "2"), ("3", "3")]),
    ("Compl.normal", 4, [("1", "1"), ("2", "1"), ("3", "1")]),
    ("Infer.normal", 3, [("TRUE", "TRUE"), ("FALSE", NO_LINE)]),
]


@pytest.fixture
def worked(tmp_path):
    root = write_set(tmp_path / "worked", WORKED, {"basic___M": None})
    warnings: list[str] = []
    analysis = analyse(load_testset(root), load_results(root), warn=warnings.append)
    return root, analysis, warnings


def _row(table: pd.DataFrame, **where) -> pd.Series:
    mask = np.ones(len(table), dtype=bool)
    for field, value in where.items():
        mask &= (table[field] == value).to_numpy()
    assert mask.sum() == 1
    return table[mask].iloc[0]


def test_worked_example_tuples(worked):
    _, analysis, warnings = worked
    assert warnings == [
        "    *** !!! [WARNING] PARTIAL RESULTS FILE: number of rows 23 differs from 24",
        INCOMPLETE_WARNING]
    table = analysis.acc_table.set_index("tuple_ID").sort_index(key=lambda s: s.str[1:].astype(int))
    assert list(table.index) == [f"t{i}" for i in range(1, 10)]  # t10 dropped
    assert table["acc"].tolist() == [1, .5, .5, 0, 1, .5, .5, 1, .5]
    assert table["bias"].tolist() == [0, 1, -1, 0, 0, 1, -.75, 0, 1]


def test_worked_example_numbers(worked):
    _, analysis, _ = worked
    sizes = accuracy_by_group(analysis.acc_table,
                              ["prompting", "modelname", "problemname", "problemsize"])
    infer = sizes[sizes["problemname"] == "Infer.normal"]
    assert infer["n"].tolist() == [2, 3] and infer["mean"].tolist() == [.75, .5]
    assert infer["var"].tolist() == pytest.approx([.125, .25], abs=1e-12)
    acc, bias = analysis.accuracy_by_problem, analysis.bias_by_problem
    inf = _row(acc, problemname="Infer.normal")
    assert (inf["n"], inf["mean"]) == (4, .625)
    assert inf["q"] == pytest.approx(.59375, abs=1e-12)
    assert inf["var"] == pytest.approx(.203125, abs=1e-12)
    assert inf["sem"] == pytest.approx(.2253469, abs=1e-7)
    assert _row(acc, problemname="Compl.normal")["var"] == pytest.approx(.078125, abs=1e-12)
    overall = analysis.accuracy_overall.iloc[0]
    assert (overall["n"], overall["mean"]) == (8, .625)
    assert overall["var"] == pytest.approx(.140625, abs=1e-12)
    assert overall["sem"] == pytest.approx(.1325825, abs=1e-7)
    assert _row(bias, problemname="Infer.normal")["mean"] == pytest.approx(1 / 12, abs=1e-12)
    assert _row(bias, problemname="Infer.normal")["sem"] == pytest.approx(.3841477, abs=1e-7)
    assert _row(bias, problemname="Compl.normal")["mean"] == pytest.approx(.3125, abs=1e-12)
    assert _row(bias, problemname="Compl.normal")["sem"] == pytest.approx(.5125381, abs=1e-7)
    assert analysis.bias_overall.iloc[0]["mean"] == pytest.approx(.1979167, abs=1e-7)
    assert analysis.bias_overall.iloc[0]["sem"] == pytest.approx(.3228116, abs=1e-7)
    assert analysis.accuracy_overall.iloc[0]["conf95"] == 1.96 * overall["sem"]


def test_worked_example_cells_and_text(worked):
    root, analysis, _ = worked
    acc = pivot_pretty(analysis.accuracy_by_problem, ["prompting", "modelname"], "problemname")
    assert list(acc.columns) == ["Infer.normal", "Compl.normal"]
    assert acc.loc[("basic", "M")].tolist() == ["62.5 (44.2)", "62.5 (27.4)"]
    bias = pivot_pretty(analysis.bias_by_problem, ["prompting", "modelname"], "problemname")
    assert bias.loc[("basic", "M")].tolist() == ["0.08 (0.75)", "0.31 (1.00)"]
    overall = pivot_pretty(analysis.accuracy_overall, "modelname", "prompting")
    assert overall.loc["M", "basic"] == "62.5 (26.0)"
    text = render_text(analysis, root)
    assert "AVERAGE ACCURACY ACROSS ALL PROBLEMS" in text and "62.5 (26.0)" in text
    assert text.count("-" * 74) == 6


def test_worked_example_json(worked):
    _, analysis, _ = worked
    doc = to_json(analysis)
    assert doc == {
        "accuracy": {"basic/M": {
            "ALL": {"mean": .625, "conf95": pytest.approx(1.96 * .1325825, abs=1e-6)},
            "Infer.normal": {"mean": .625, "conf95": pytest.approx(1.96 * .2253469, abs=1e-6)},
            "Compl.normal": {"mean": .625,
                             "conf95": pytest.approx(1.96 * math.sqrt(.078125 / 4))}}},
        "bias": {"basic/M": {
            "ALL": {"mean": pytest.approx(.1979167, abs=1e-7),
                    "conf95": pytest.approx(1.96 * .3228116, abs=1e-6)},
            "Infer.normal": {"mean": pytest.approx(1 / 12),
                             "conf95": pytest.approx(1.96 * .3841477, abs=1e-6)},
            "Compl.normal": {"mean": .3125, "conf95": pytest.approx(1.96 * .5125381, abs=1e-6)}}},
    }


def test_negative_variance_edge(tmp_path):
    """Size-3 {1} and size-4 {1, 0}: V = −.1875 → undefined SEM, printed as nan (spec §3.7)."""
    tuples = [("Infer.normal", 3, [("TRUE", "TRUE"), ("FALSE", "FALSE")]),
              ("Infer.normal", 4, [("TRUE", "TRUE"), ("FALSE", "FALSE")]),
              ("Infer.normal", 4, [("TRUE", "FALSE"), ("FALSE", "TRUE")])]
    root = write_set(tmp_path / "edge", tuples, {"basic___M": None})
    analysis = analyse_testset_dir(root, warn=lambda _: None)
    row = analysis.accuracy_by_problem.iloc[0]
    assert row["var"] == pytest.approx(-.1875, abs=1e-12)
    assert math.isnan(row["sem"]) and math.isnan(row["conf95"])
    acc = pivot_pretty(analysis.accuracy_by_problem, ["prompting", "modelname"], "problemname")
    assert acc.loc[("basic", "M"), "Infer.normal"] == "75.0 (nan)"
    assert "AVERAGE ACCURACY" not in render_text(analysis, root)  # a single problem
    doc = to_json(analysis)
    assert doc["accuracy"]["basic/M"]["Infer.normal"] == {"mean": .75, "conf95": None}
    json.dumps(doc, allow_nan=False)
