"""A run's WorldSense scores, made from its records without pandas (`run_scores.score_run`),
are the analysis of upstream's results files (`metrics.analyse`, pandas) number for number:
random answers, invalid ones, incomplete tuples, one-tuple cells and small subsets. And a run
imports no pandas (~0.45 s of a small run's ~1 s): `mindprobe run` guards it."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from mindprobe.benchmarks.worldsense.metrics import analyse
from mindprobe.benchmarks.worldsense.report import to_json
from mindprobe.benchmarks.worldsense.run_scores import score_run
from mindprobe.benchmarks.worldsense.runs import frames
from mindprobe.core.store import read_records
from mindprobe.testing import TestServer

ANSWERS = ("TRUE", "FALSE", "POSSIBLE", "IMPOSSIBLE", "1", "2", "3", "", "maybe")


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    from mindprobe.cli import main

    runs = tmp_path_factory.mktemp("runs")
    assert main(["run", "worldsense:fresh", "--model", "random", "--limit", "600",
                 "--runs-dir", str(runs), "--json"]) == 0
    return sorted(read_records(next(runs.rglob("records.jsonl"))), key=lambda r: r["Key"])


def _both(records: list[dict]) -> tuple[str, str, list[str], list[str]]:
    old, new = [], []
    want = to_json(analyse(*frames(records, "basic", "m"), warn=old.append))
    got = score_run(records, "basic", "m", new.append)
    return json.dumps(want), json.dumps(got), [w for w in old if "PARTIAL" not in w], new


@pytest.mark.parametrize("seed", range(12))
def test_a_runs_scores_are_the_analysis_of_its_results(records, seed):
    rng = random.Random(seed)
    right = rng.random()
    rs = [{**r, "resp": r["goldresp"] if rng.random() < right else rng.choice(ANSWERS)}
          for r in records]
    if seed % 3 == 1:  # trials missing: incomplete tuples, dropped with upstream's warning
        rs = [r for r in rs if rng.random() > 0.03]
    rs = rs[:rng.choice([3, 20, 60, 250, len(rs)])]
    want, got, old_warnings, new_warnings = _both(rs)
    assert got == want
    assert new_warnings == old_warnings


def test_the_run_itself_is_scored_alike(records):
    want, got, old_warnings, new_warnings = _both(records)
    assert got == want and new_warnings == old_warnings == []


@pytest.mark.slow
def test_a_run_imports_no_pandas(shared_data, tmp_path):
    """`mindprobe run worldsense:test_set` against an OpenAI-compatible server, its tables
    and headline shown, without pandas ever imported, nor the trial generator (a released
    test set's gold answers are de-obfuscated by `data.deobfuscate`)."""
    probe = ("import sys\nfrom mindprobe.cli import main\nrc = main(sys.argv[1:])\n"
             "print('RC', rc, 'PANDAS', 'pandas' in sys.modules, 'GENERATOR',\n"
             "      'mindprobe.benchmarks.worldsense.generate' in sys.modules)")
    with TestServer() as srv:
        out = subprocess.run(
            [sys.executable, "-c", probe, "run", "worldsense:test_set", "--model",
             f"openai:test-model@{srv.base_url}", "--limit", "40", "--reasks", "0",
             "--runs-dir", str(tmp_path / "runs"), "--cache", str(tmp_path / "c.sqlite"),
             "--data-dir", str(shared_data("worldsense"))],
            capture_output=True, text=True, timeout=300)
    assert "RC 0 PANDAS False GENERATOR False" in out.stdout, out.stderr[-2000:]
    assert "headline: accuracy" in out.stdout and "95% CI" in out.stdout
