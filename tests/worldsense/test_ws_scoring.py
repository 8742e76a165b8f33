"""WorldSense scoring details on tiny synthetic sets: gold decoding, grouping, tuple filter."""

from __future__ import annotations

import bz2
import json
import math

import pandas as pd
import pytest
from ws_fixtures import write_set

from mindprobe.benchmarks.worldsense import (
    accuracy_by_group,
    analyse,
    bias_by_group,
    compute_acc_table,
    load_results,
    load_testset,
    pivot_pretty,
)
from mindprobe.benchmarks.worldsense.metrics import INCOMPLETE_WARNING
from mindprobe.benchmarks.worldsense.report import analyse_testset_dir


def test_deobfuscation_and_extra_fields(tmp_path):
    tuples = [("Infer.normal", 3, [("TRUE", "TRUE"), ("FALSE", "FALSE")]),
              ("Consist.normal", 4, [("POSSIBLE", "POSSIBLE"), ("IMPOSSIBLE", "POSSIBLE")]),
              ("Compl.trivial", 5, [("1", "1"), ("2", "2"), ("3", "3")]),
              ("Infer.normal", 3, [("Stranger", "TRUE"), ("FALSE", "FALSE")])]
    root = write_set(tmp_path / "obf", tuples, {})
    raw = [json.loads(line) for line in bz2.decompress((root / "trials.jsonl.bz2").read_bytes())
           .decode().splitlines()]
    assert [r["goldresp_obfusc"] for r in raw[:7]] == [
        "Emmanuel", "Megi", "Dieuwke", "Pascal", "Mark", "Youssef", "Yoda"]
    trials = load_testset(root, add_extra_fields=True)
    assert trials["goldresp"].tolist() == [
        "TRUE", "FALSE", "POSSIBLE", "IMPOSSIBLE", "1", "2", "3", "Stranger", "FALSE"]
    assert "goldresp_obfusc" not in trials
    assert list(trials.columns[-4:]) == ["bintern", "globcomplex", "domain", "intraining"]
    assert set(trials["domain"]) == {"scalar"} and set(trials["intraining"]) == {"ind"}
    assert set(trials["bintern"]) == {"bin"} and set(trials["globcomplex"]) == {0}


def test_same_model_two_promptings_both_survive(tmp_path):
    tuples = [("Infer.normal", 3, [("TRUE", "TRUE"), ("FALSE", "FALSE")]),
              ("Infer.normal", 3, [("TRUE", "TRUE"), ("FALSE", "TRUE")])]
    runs = {"basic___M": None, "COT___M": ["FALSE", "TRUE", "TRUE", "FALSE"]}
    root = write_set(tmp_path / "two", tuples, runs)
    warnings: list[str] = []
    analysis = analyse_testset_dir(root, warn=warnings.append)
    assert warnings == []
    acc = pivot_pretty(analysis.accuracy_by_problem, ["prompting", "modelname"], "problemname")
    assert list(acc.index) == [("basic", "M"), ("COT", "M")]
    assert acc["Infer.normal"].tolist() == ["75.0 (49.0)", "50.0 (98.0)"]
    overall = pivot_pretty(analysis.accuracy_overall, "modelname", "prompting")
    assert list(overall.columns) == ["basic", "COT"]


def test_duplicate_key_drops_tuple(tmp_path):
    tuples = [("Infer.normal", 3, [("TRUE", "TRUE"), ("FALSE", "FALSE")]),
              ("Infer.normal", 3, [("TRUE", "TRUE"), ("FALSE", "TRUE")])]
    root = write_set(tmp_path / "dup", tuples, {"basic___M": None})
    trials = load_testset(root)
    results = load_results(root)
    results = pd.concat([results, results.iloc[[0]]], ignore_index=True)  # t1 now has 3 rows
    warnings: list[str] = []
    analysis = analyse(trials, results, warn=warnings.append)
    assert INCOMPLETE_WARNING in warnings
    assert analysis.acc_table["tuple_ID"].tolist() == ["t2"]


def test_unknown_keys_ignored_and_grouping_options(tmp_path):
    tuples = [("Infer.normal", 3, [("TRUE", "TRUE"), ("FALSE", "FALSE")]),
              ("Infer.normal", 4, [("TRUE", "TRUE"), ("FALSE", "TRUE")]),
              ("Infer.normal", 4, [("TRUE", "FALSE"), ("FALSE", "TRUE")])]
    root = write_set(tmp_path / "g", tuples, {"basic___M": None})
    with (root / "results" / "basic___M___results.jsonl").open("a") as fh:
        fh.write('{"Key": 12345, "resp": "TRUE"}\n')
    trials = load_testset(root)
    acc_table = compute_acc_table(
        trials.merge(load_results(root), on="Key"), warn=pytest.fail)
    assert acc_table["acc"].tolist() == [1, .5, 0]
    by_size = accuracy_by_group(acc_table, ["prompting", "modelname", "problemsize"])
    assert by_size["mean"].tolist() == [1, .25] and by_size["n"].tolist() == [1, 2]
    plain = accuracy_by_group(acc_table, reweight=False)
    assert plain["mean"].iloc[0] == pytest.approx(.5)
    assert plain["sem"].iloc[0] == pytest.approx(math.sqrt(.25 / 3))
    assert accuracy_by_group(acc_table)["mean"].iloc[0] == pytest.approx(.625)
    assert bias_by_group(acc_table)["mean"].iloc[0] == pytest.approx(.25)
    pretty = pivot_pretty(by_size, "problemsize", "modelname", cell_style="value")
    assert pretty["M"].tolist() == ["100.0", "25.0"]
