"""The chance baseline of MR-GSM8K: the replies `--model random` picks from, and the
half-width a plan states for its MR-Score before the run (`Benchmark.precision`)."""

from __future__ import annotations

import random

import numpy as np

from mindprobe.core.plan import RunPlan
from mindprobe.core.stats import Precision, proportion_precision

from .interval import kind_of, mr_scores
from .metrics import score_item

#: Runs of the chance baseline simulated for a plan's statement.
CHANCE_RUNS = 400


def canned_reply(judgement: str, step: str, analysis: str) -> str:
    return (
        "Step-by-step Evaluation: (canned reply)\n"
        f"Final Judgement: {judgement}\nFirst Error Step: {step}\nError Analysis: {analysis}"
    )


def baseline_choices(n_steps: int) -> list[str]:
    """Replies `--model random` picks from: `correct` with probability 1/2, otherwise `wrong`
    with a first error step uniform over the solution's steps (the `correct` reply is listed
    once per step so a uniform pick over the list gives exactly that)."""
    n = max(1, n_steps)
    wrong = [canned_reply("wrong", str(i), f"Step {i} is wrong.") for i in range(1, n + 1)]
    return [canned_reply("correct", "N/A", "N/A")] * n + wrong


def stated_precision(plan: RunPlan) -> Precision:
    """A share's widest half-width for an unknown model; for the chance baseline the spread of
    MR-Score over simulated runs of its replies on the planned solutions."""
    items = [it.payload["item"] for it in plan.items]
    facts = plan.model_facts
    if not items or facts is None or not facts.at_chance:
        return proportion_precision(len(items), "solutions")
    kinds = []
    for k, rec in enumerate(items):
        choices = baseline_choices(len(rec["model_output_steps"]))
        rng = random.Random(f"chance|{rec['uuid']}|{k}")
        kinds.append([kind_of(score_item(rec, rng.choice(choices)), None)
                      for _ in range(CHANCE_RUNS)])
    runs = np.asarray(kinds).T  # CHANCE_RUNS × items
    scores = mr_scores(np.stack([(runs == c).sum(axis=1) for c in range(6)], axis=-1))
    lo, hi = np.quantile(scores, [0.025, 0.975])
    return Precision(100 * (hi - lo) / 2, " points", f"the spread at chance: MR-Score of "
                     f"{CHANCE_RUNS} simulated runs of uniform replies on the {len(items)} "
                     "planned solutions")
