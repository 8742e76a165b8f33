"""The Python API: `mindprobe.evaluate()` runs exactly what `mindprobe run` runs (same run
directory, manifest, records, JSON), `load_run()` gives `analyse`'s results, and both work
inside a running event loop (a notebook cell) as well as outside one."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import mindprobe
from mindprobe.core.store import load_run, read_records
from mindprobe.errors import UsageError
from mindprobe.testing import TestServer

#: One small run per built-in benchmark: (task, CLI flags, evaluate() keywords, shared data).
CASES = {
    "worldsense": ("worldsense:fresh", ["--limit", "8", "--prompting", "cot"],
                   {"limit": 8, "options": {"prompting": "cot"}}, None),
    "already_said_that": ("already_said_that:distractorless",
                          ["--n-samples", "2", "--max-turns", "6"],
                          {"options": {"n_samples": 2, "max_turns": 6}}, "already_said_that"),
    "mr_gsm8k": ("mr_gsm8k:sample", ["--limit", "4"], {"limit": 4}, "mr_gsm8k"),
    "sort": ("sort:250-20", ["--limit", "10", "--books", "73017"],
             {"limit": 10, "options": {"books": "73017"}}, "sort"),
    "fanoutqa": ("fanoutqa", ["--limit", "3", "--max-tokens", "16"],
                 {"limit": 3, "max_tokens": 16}, "fanoutqa"),
}


def _answers(run_dir: Path) -> dict:
    """Each item's record without its timings (they differ from run to run)."""
    return {r["id"]: {k: v for k, v in r.items() if k not in ("latency", "elapsed", "t")}
            for r in read_records(run_dir / "records.jsonl")}


def _same_doc(a: dict, b: dict) -> bool:
    """Two runs' documents without where they lie and how long requests took."""
    def strip(doc: dict) -> dict:
        return {k: v for k, v in doc.items() if k not in ("run", "endpoints")}
    return strip(a) == strip(b)


def _without_run(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k != "run"}


@pytest.mark.parametrize("bench", list(CASES))
@pytest.mark.slow
def test_evaluate_equals_the_cli(bench, cli, tmp_path, monkeypatch, shared_data):
    task, flags, kwargs, data = CASES[bench]
    if data is not None:
        folder = shared_data(data)  # skips with the reason when absent
        monkeypatch.setenv("MINDPROBE_DATA_DIR", str(folder.parent))  # as tests/fanoutqa do
        flags = [*flags, "--data-dir", str(folder)]
        kwargs = {**kwargs, "data_dir": folder}
    # FanOutQA's answers are free text (no answer set for the random model): a server answers
    with TestServer(reply="The answer is 42.") as srv:
        model = f"openai:test-model@{srv.base_url}" if bench == "fanoutqa" else "random"
        code, doc, err = cli("run", task, "--model", model, "--runs-dir", tmp_path / "cli",
                             "--no-cache", "--json", *flags)
        assert code == 0, err
        monkeypatch.chdir(tmp_path)
        res = mindprobe.evaluate(task, model, runs_dir=tmp_path / "api", cache=False,
                                 progress=False, **kwargs)
    assert _same_doc(res.document, doc)
    assert {k: doc[k] for k in res.to_json()} == res.to_json()
    cli_dir, api_dir = Path(doc["run"]), res.run_dir
    assert cli_dir.relative_to(tmp_path / "cli") == api_dir.relative_to(tmp_path / "api")
    assert _answers(cli_dir) == _answers(api_dir)
    cli_m, api_m = (json.loads((d / "manifest.json").read_text()) for d in (cli_dir, api_dir))
    for key in ("benchmark", "variant", "model", "options", "config", "data", "n_items"):
        assert cli_m[key] == api_m[key], key
    # load_run: the manifest, the records as a DataFrame, and analyse's results
    run = mindprobe.load_run(api_dir)
    assert run.benchmark == bench and len(run.records) == len(run.raw_records)
    code, analysed, err = cli("analyse", bench, "--run", api_dir, "--json")
    assert code == 0, err
    assert run.results().to_json()["headline"] == analysed["headline"]
    assert run.results().to_json()["tables"] == analysed["tables"]


def test_evaluate_resumes_the_same_run_and_checks_options_like_flags(tmp_path):
    first = mindprobe.evaluate("worldsense:fresh", "random", limit=5, runs_dir=tmp_path,
                               cache=False, progress=False)
    again = mindprobe.evaluate("worldsense:fresh", "random", limit=5, runs_dir=tmp_path,
                               cache=False, progress=False)
    assert again.run_dir == first.run_dir and again.to_json() == first.to_json()
    manifest = json.loads((first.run_dir / "manifest.json").read_text())
    assert manifest["command"].startswith("mindprobe run worldsense:fresh --model random")
    with pytest.raises(UsageError, match="--n-trials|unknown option"):
        mindprobe.evaluate("worldsense:fresh", "random", options={"no_such": 1},
                           runs_dir=tmp_path, progress=False)
    with pytest.raises(UsageError, match="must be one of"):
        mindprobe.evaluate("worldsense:fresh", "random", options={"prompting": "nope"},
                           runs_dir=tmp_path, progress=False)
    with pytest.raises(UsageError, match="unknown variant"):
        mindprobe.evaluate("worldsense:nope", "random", runs_dir=tmp_path, progress=False)


def test_evaluate_inside_a_running_event_loop(tmp_path):
    """A notebook cell runs inside an event loop: evaluate() still runs to the end."""
    async def cell():
        return mindprobe.evaluate("worldsense:fresh", "random", limit=4, runs_dir=tmp_path,
                                  cache=False, progress=False)

    res = asyncio.run(cell())
    assert res.headline is not None and res.headline.n >= 4  # whole tuples
    assert (res.run_dir / "records.jsonl").is_file()


def test_reasoning_settings_are_parameters(tmp_path):
    seen: list[dict] = []

    def reply(body: dict) -> str:
        seen.append(body)
        return "TRUE"

    with TestServer(responder=reply) as srv:
        res = mindprobe.evaluate("worldsense:fresh", f"openai:test-model@{srv.base_url}", limit=2,
                                 runs_dir=tmp_path, cache=False, progress=False,
                                 reasoning_effort="low")
    assert seen and all(b.get("reasoning_effort") == "low" for b in seen)
    manifest = json.loads((res.run_dir / "manifest.json").read_text())
    assert manifest["model_identity"]["model"]["reasoning_effort"] == "low"
    assert {"worldsense", "sort", "fanoutqa"} <= set(mindprobe.list_benchmarks())


def test_evaluate_a_group_of_variants(tmp_path, shared_data):
    """`name:all`: the benchmark's combined view, each variant's results kept."""
    res = mindprobe.evaluate("already_said_that:all", "random", runs_dir=tmp_path,
                             data_dir=shared_data("already_said_that"),
                             options={"n_samples": 1, "max_turns": 3}, cache=False,
                             progress=False)
    assert len(res.variants) == 5 and res.tables
    assert set(res.document["variants"]) == set(res.variants)


#: Runs whose scores vary from item to item, so an order-dependent statistic would show: enough
#: records, and float scores (FanOutQA's ROUGE and loose accuracy, from replies that differ
#: from question to question), that a sum taken in record order differs in its last digits.
ORDER_CASES = {
    "worldsense": ("worldsense:fresh", {"limit": 24}, None),
    "already_said_that": ("already_said_that:which-is-heavier",
                          {"options": {"n_samples": 6, "max_turns": 10}}, "already_said_that"),
    "mr_gsm8k": ("mr_gsm8k:sample", {"limit": 8}, "mr_gsm8k"),
    "sort": ("sort:250-20", {"limit": 12, "options": {"books": "73017"}}, "sort"),
    "fanoutqa": ("fanoutqa", {"limit": 40, "max_tokens": 16}, "fanoutqa"),
}


def _varied_reply(body: dict) -> str:
    """A reply that differs from question to question (a few of the prompt's own words, picked
    by its hash), so ROUGE and loose accuracy take many different float values."""
    import hashlib

    text = body["messages"][-1]["content"] if "messages" in body else body["prompt"]
    words = text.split()
    seed = int(hashlib.sha256(text.encode()).hexdigest(), 16)
    return " ".join(words[(seed >> (8 * i)) % len(words)] for i in range(1 + seed % 9))


@pytest.mark.parametrize("bench", list(ORDER_CASES))
@pytest.mark.slow
def test_results_do_not_depend_on_the_order_records_finished_in(bench, tmp_path, monkeypatch,
                                                                shared_data):
    """Records are written as items finish, an order concurrency changes: every number (every
    metric, table cell and interval) must be bit-identical for any order of the same records."""
    import random

    from mindprobe.registry import get_benchmark

    task, kwargs, data = ORDER_CASES[bench]
    if data is not None:
        folder = shared_data(data)
        monkeypatch.setenv("MINDPROBE_DATA_DIR", str(folder.parent))
        kwargs = {**kwargs, "data_dir": folder}
    monkeypatch.chdir(tmp_path)
    with TestServer(responder=_varied_reply) as srv:
        model = f"openai:test-model@{srv.base_url}" if bench == "fanoutqa" else "random"
        res = mindprobe.evaluate(task, model, runs_dir=tmp_path, cache=False, progress=False,
                                 seed=3, **kwargs)
    run = load_run(res.run_dir)
    records, plan = list(run.records), run.plan()
    benchmark = get_benchmark(bench)
    first = benchmark.results(records, plan).to_json()
    numbers = _floats(first)
    assert len(set(numbers)) > 5, "too few distinct numbers for the order to matter"
    text = json.dumps(first, sort_keys=True, default=str)
    for seed in range(6):
        random.Random(seed).shuffle(records)
        again = benchmark.results(records, plan).to_json()
        assert json.dumps(again, sort_keys=True, default=str) == text, seed
        assert _floats(again) == numbers, seed  # repr-exact, NaN included


def _floats(doc: object) -> list[str]:
    """Every float in a results document, as its exact repr, in document order."""
    if isinstance(doc, dict):
        return [f for k in sorted(doc, key=str) for f in _floats(doc[k])]
    if isinstance(doc, list | tuple):
        return [f for v in doc for f in _floats(v)]
    return [repr(doc)] if isinstance(doc, float) else []


def test_order_free_statistics_give_one_value_for_any_order():
    """The shared helpers every mean over records goes through: the same values in another
    order give bit-identical results (a running sum or pandas' running mean and variance differ
    in their last digits on these values)."""
    import random

    import pandas as pd

    from mindprobe.core.stats import (
        cell_moments,
        exact_mean,
        exact_sum,
        mean_ci,
        paired_difference,
    )

    rng = random.Random(1)
    values = [rng.random() / 3 for _ in range(300)]
    sums, means, cells, cis, diffs = set(), set(), set(), set(), set()
    for seed in range(8):
        v = values[:]
        random.Random(seed).shuffle(v)
        sums.add(exact_sum(v))
        means.add(exact_mean(v))
        frame = pd.DataFrame({"g": [0] * len(v), "x": v})
        cells.add(json.dumps(cell_moments(frame, ["g"], "x").to_dict("records")))
        cis.add(mean_ci(v))
        pairs = list(zip(values, values[::-1], strict=True))
        random.Random(seed).shuffle(pairs)
        diffs.add(paired_difference([a for a, _ in pairs], [b for _, b in pairs]))
    assert len(sums) == len(means) == len(cells) == len(cis) == len(diffs) == 1, (cells, diffs)


def test_bootstrap_intervals_depend_on_the_values_alone():
    """The one-sample bootstrap (Already Said That's turns, FanOutQA's scores) sorts before it
    resamples: the same values in another order give the same interval."""
    import random

    from mindprobe.benchmarks.fanoutqa.breakdown import bootstrap_interval
    from mindprobe.core.stats import bootstrap_mean, mean_interval

    values = [float(v) for v in [0, 3, 3, 7, 12, 1, 0, 30, 4, 4, 9, 2]]
    shuffled = values[:]
    random.Random(5).shuffle(shuffled)
    assert shuffled != values
    assert bootstrap_mean(values) == bootstrap_mean(shuffled)
    assert mean_interval(values) == mean_interval(shuffled)
    assert bootstrap_interval(values) == bootstrap_interval(shuffled)
    lo, hi = bootstrap_mean(values)
    assert lo < sum(values) / len(values) < hi
