"""In-context examples: never from the question set, never the question's tuple, distinct
tuples, the right categories, seeded; official training set for the official test set."""

from __future__ import annotations

import pytest

from mindprobe.benchmarks.worldsense import sets
from mindprobe.benchmarks.worldsense import strategies as st
from mindprobe.benchmarks.worldsense.generate import deobfuscate, generate_trials
from mindprobe.benchmarks.worldsense.options import WorldSenseOptions
from mindprobe.benchmarks.worldsense.task import WorldSenseBenchmark
from mindprobe.core.plan import ModelFacts, PlanContext


@pytest.fixture(scope="module", autouse=True)
def _shared_cache(tmp_path_factory):
    """One decoded-data cache for the module (the test set is decoded once), not the user's."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MINDPROBE_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        yield


def _trials(seed: int, n: int = 2) -> list[dict]:
    return [{**t, "goldresp": deobfuscate(t["goldresp_obfusc"])}
            for t in generate_trials(seed, n)]


def test_pool_excludes_question_texts_and_tuples():
    questions = _trials(1)
    candidates = _trials(2) + questions[:10]  # some of the question set sneak into the pool
    # a candidate of a question's tuple with a new text is excluded too
    sneaky = {**candidates[0], "tuple_ID": questions[20]["tuple_ID"], "text": "new text"}
    pool = st.ExamplePool.from_generated([*candidates, sneaky], questions)
    assert pool.excluded == 11
    q_texts = {q["text"] for q in questions}
    q_tuples = {q["tuple_ID"] for q in questions}
    for exs in pool.by_category.values():
        assert all(e.text not in q_texts and e.tuple_id not in q_tuples for e in exs)


@pytest.mark.parametrize("strategy", st.INCONTEXT)
def test_draw_categories_tuples_and_seed(strategy):
    questions = _trials(1)
    pool = st.ExamplePool.from_generated(_trials(2, 3), questions)
    for q in questions:
        exs = pool.draw(strategy, q, 5, seed=7)
        assert len(exs) == 5
        assert len({e.tuple_id for e in exs}) == 5  # distinct tuples
        assert q["tuple_ID"] not in {e.tuple_id for e in exs}
        own = st.category_of(q["expectedresp"])
        cats = {e.category for e in exs}
        assert cats == {own} if strategy == "incontext-iid" else own not in cats
        assert [e.id for e in pool.draw(strategy, q, 5, seed=7)] == [e.id for e in exs]
    other = [e.id for e in pool.draw(strategy, questions[0], 5, seed=8)]
    assert other != [e.id for e in pool.draw(strategy, questions[0], 5, seed=7)]


def test_draw_refuses_when_the_pool_is_too_small():
    questions = _trials(1, 1)
    pool = st.ExamplePool.from_generated(_trials(2, 1), questions)
    with pytest.raises(Exception, match="lower --shots"):
        pool.draw("incontext-iid", questions[0], 50, seed=0)


def _plan(variant, strategy, data_dir=None, limit=30, shots=3):
    ctx = PlanContext(variant=variant, seed=3, data_dir=data_dir, limit=limit,
                      model=ModelFacts("random", "random"), info=lambda m: None)
    opts = WorldSenseOptions(prompting=strategy, shots=shots)
    return WorldSenseBenchmark().plan(ctx, opts)


@pytest.mark.slow
def test_official_test_set_draws_from_the_official_training_set(shared_data):
    root = shared_data("worldsense")
    plan = _plan("test_set", "incontext-iid", root, limit=60)
    info = plan.config["prompt"]["examples"]
    assert info["source"] == st.TRAINING_FILE and info["sha256"] == sets.sha256_of(st.TRAINING_FILE)
    assert info["records"] == 12096
    # The pool was checked against every test-set text: none is a training text (other skins).
    assert info["excluded_as_in_question_set"] == 0
    for item in plan.items:
        exs = item.payload["_examples"]
        assert len(exs) == 3 and all(e.id.startswith("trials_10k:") for e in exs)
        assert all(e.category == st.category_of(item.payload["expectedresp"]) for e in exs)
        assert all(e.text != item.payload["text"] for e in exs)


def test_official_test_set_without_training_set_is_refused(shared_data, tmp_path):
    root = shared_data("worldsense")
    (tmp_path / "test_set").mkdir()
    (tmp_path / "test_set" / "trials.jsonl.bz2").symlink_to(root / "test_set" / "trials.jsonl.bz2")
    with pytest.raises(Exception, match="trials_10k"):
        _plan("test_set", "incontext-diffcat", tmp_path)


def test_fresh_without_training_set_generates_examples():
    plan = _plan("fresh", "incontext-diffcat")
    info = plan.config["prompt"]["examples"]
    assert info["source"].startswith("generated") and info["seed"] == 3 + st.POOL_SEED_OFFSET
    questions, _ = sets.fresh_trials(3)
    q_tuples = {t["tuple_ID"] for t in questions}
    q_texts = {t["text"] for t in questions}
    for item in plan.items:
        for e in item.payload["_examples"]:
            assert e.tuple_id not in q_tuples and e.text not in q_texts
            assert e.category != st.category_of(item.payload["expectedresp"])


def test_fresh_prefers_the_official_training_set_when_present(shared_data):
    plan = _plan("fresh", "incontext-iid", shared_data("worldsense"))
    assert plan.config["prompt"]["examples"]["source"] == st.TRAINING_FILE
