"""The half-width a plan states for the random baseline: turns survived at chance follow a
geometric law cut at `max_turns`, summed in closed form (no chat played), and agree with
chats drawn by the benchmark and played against upstream's random reply."""

from __future__ import annotations

import random
import statistics

import pytest

from mindprobe.benchmarks.already_said_that import load_distractors, load_samples
from mindprobe.benchmarks.already_said_that.episode import Episode, random_baseline_reply
from mindprobe.benchmarks.already_said_that.precision import chance_moments, chance_spread
from mindprobe.core.plan import Item, RunPlan


def test_the_law_in_closed_form():
    assert chance_moments(1, True) == pytest.approx((2 / 3, 2 / 3), abs=1e-12)
    assert chance_moments(1, False) == pytest.approx((1 / 2, 1 / 2), abs=1e-12)
    # uncut: mean p/(1-p), variance p/(1-p)^2 (p = 2/3 with distractors, 1/2 without)
    assert chance_moments(200, True) == pytest.approx((2.0, 6.0 + 4.0), abs=1e-9)
    assert chance_moments(200, False) == pytest.approx((1.0, 2.0 + 1.0), abs=1e-9)


def _plan(root, variant, chats, max_turns):
    pool, _ = load_distractors(root, variant)
    samples = load_samples(root)
    items = [Item(str(i), {"idx": i, "words": samples[i], "pool": pool, "system": "S"})
             for i in range(chats)]
    return RunPlan(items=items, config={"variant": variant, "seed": 7, "max_turns": max_turns})


@pytest.mark.parametrize("variant", ["which-is-heavier", "distractorless"])
def test_the_stated_spread_is_what_chance_chats_show(shared_data, variant):
    plan = _plan(shared_data("already_said_that"), variant, chats=500, max_turns=6)
    turns = []
    for item in plan.items:
        p = item.payload
        for k in range(4):
            rng = random.Random(f"chance|{p['idx']}|{k}")
            chat = Episode(variant=variant, idx=p["idx"], seed=7, words=p["words"],
                           pool=p["pool"], system="S", max_turns=6)
            while not chat.finished:
                chat.next_user_message()
                chat.observe(random_baseline_reply(rng))
            turns.append(chat.num_turns)
    assert chance_spread(plan) == pytest.approx(statistics.pstdev(turns), rel=0.04)
