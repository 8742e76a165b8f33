"""Random-baseline statistics over many simulated samples (spec §11; issue tolerances)."""

from __future__ import annotations

import asyncio
import functools
import random
from pathlib import Path

import pytest

from mindprobe.benchmarks.already_said_that import (
    VARIANTS,
    aggregate,
    load_distractors,
    load_samples,
    random_baseline_reply,
    run_episode,
)

N = 6000  # samples per variant: the 500 files' samples cycled, each with its own idx
SEED = 20220722


async def _simulate(samples, pool, variant):
    rng = random.Random(f"random-baseline.{variant}:{SEED}")  # never the sample RNG

    async def reply(messages):
        return random_baseline_reply(rng)

    return [
        await run_episode(variant=variant, idx=i, seed=SEED, words=samples[i % len(samples)],
                          pool=pool, system="S", reply=reply)
        for i in range(N)
    ]


@functools.cache
def _baseline_metrics(root: Path, variant: str) -> dict[str, float]:
    pool, _ = load_distractors(root, variant)
    return aggregate(asyncio.run(_simulate(load_samples(root), pool, variant)))


@pytest.mark.parametrize("variant", VARIANTS)
def test_random_baseline(shared_data, variant):
    m = _baseline_metrics(shared_data("already_said_that"), variant)
    assert m["violation_rate"] == 0.0
    assert m["false_positive_rate"] + m["false_negative_rate"] == pytest.approx(1.0)
    assert m["min_num_turns"] == 0.0
    if variant == "distractorless":
        assert m["avg_num_turns"] == pytest.approx(1.00, abs=0.04)
        assert m["avg_num_distractors"] == 0.0
        assert m["avg_distractor_accuracy"] != m["avg_distractor_accuracy"]  # NaN
        return
    assert m["avg_num_turns"] == pytest.approx(2.00, abs=0.06)
    assert m["stddev_num_turns"] == pytest.approx(2.45, abs=0.1)
    assert m["avg_num_distractors"] == pytest.approx(1.00, abs=0.04)
    if variant == "which-is-heavier":
        assert m["avg_distractor_accuracy"] == pytest.approx(0.50, abs=0.02)
    else:
        assert m["avg_distractor_accuracy"] == 0.0
