"""The half-width of turns survived a plan states before the run (`Benchmark.precision`).

The headline's interval is a percentile bootstrap of the mean over chats, about ±1.96·sd/√n for
n chats of spread sd (turns). The spread depends on the model: for an unknown one the plan
states the widest (`WORST_SD`); for the chance baseline (`ModelFacts.at_chance`) it is known
before the run, so the plan plays the planned chats against a uniform yes/no reply (upstream's
random baseline, spec §11; a few replays each, no model) and states the spread they give.
"""

from __future__ import annotations

import random
import statistics

from mindprobe.benchmarks.already_said_that.episode import Episode, random_baseline_reply
from mindprobe.core.benchmark import RunPlan
from mindprobe.core.stats import Z95, Precision

#: The largest spread (population sd, turns) of turns survived when each main-task turn fails
#: with one constant probability: 35.7 at ~2% per turn (mean ~55 turns; simulated, 20,000
#: chats per rate), against ~14 for a model whose chats last ~15 turns.
WORST_SD = 36.0
#: Chats played at chance to measure the spread (replays per planned chat: this over n).
CHANCE_CHATS = 2000


def chance_turns(plan: RunPlan) -> list[int]:
    """Turns survived by a uniform yes/no reply on each planned chat, replayed with seeded
    replies (the chats' own turns, as the run draws them)."""
    cfg = plan.config
    replays = max(4, CHANCE_CHATS // max(1, len(plan.items)))
    out = []
    for item in plan.items:
        p = item.payload
        for k in range(replays):
            rng = random.Random(f"chance|{p['idx']}|{k}")
            chat = Episode(variant=cfg["variant"], idx=p["idx"], seed=cfg["seed"],
                           words=p["words"], pool=p["pool"], system=p["system"],
                           max_turns=cfg["max_turns"])
            while not chat.finished:
                chat.next_user_message()
                chat.observe(random_baseline_reply(rng))
            out.append(chat.num_turns)
    return out


def stated_precision(plan: RunPlan) -> Precision:
    """±1.96·sd/√chats: sd measured at chance for the chance baseline, else the widest."""
    n = len(plan.items)
    if n == 0:
        return Precision(None, " turns", "no chats")
    facts = plan.model_facts
    if facts is not None and facts.at_chance:
        turns = chance_turns(plan)
        sd = statistics.pstdev(turns)
        basis = (f"the spread at chance, {sd:.1f} turns: the {n} planned chats played "
                 f"{len(turns) // n} times each with a uniform yes/no reply")
    else:
        sd = WORST_SD
        basis = (f"at most: the widest spread of turns survived, {WORST_SD:.0f} turns (chats "
                 f"ending anywhere in 0-100), over {n} chats; a model whose chats end by turn "
                 "~15 spreads ~14")
    return Precision(Z95 * sd / n ** 0.5, " turns", basis)
