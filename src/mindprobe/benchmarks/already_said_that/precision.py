"""The half-width of turns survived a plan states before the run (`Benchmark.precision`).

The headline's interval is a percentile bootstrap of the mean over chats, about ±1.96·sd/√n for
n chats of spread sd (turns). The spread depends on the model: for an unknown one the plan
states the widest (`WORST_SD`); for the chance baseline (`ModelFacts.at_chance`) it is known
before the run, in closed form: upstream's random baseline (spec §11) answers yes or no with
p = 1/2 from its own RNG, so whatever the chat's words a main-task turn is answered right with
probability 1/2, and a distractor turn (drawn with probability 1/3 while the chat has any,
spec §5) is counted whatever the reply (spec §8). Over chats drawn as the benchmark draws them,
each turn ends the chat with one fixed probability, so turns survived follow a geometric law
cut at `max_turns`, whose moments are summed here: no chat is played, and a plan of any size
states it at once. (A chat's own turn sequence is fixed by its seed, so the spread of a few
given chats replayed many times differs from this by chance; the interval is over chats.)
"""

from __future__ import annotations

from mindprobe.core.plan import RunPlan
from mindprobe.core.stats import Z95, Precision

#: The largest spread (population sd, turns) of turns survived when each main-task turn fails
#: with one constant probability: 35.7 at ~2% per turn (mean ~55 turns; simulated, 20,000
#: chats per rate), against ~14 for a model whose chats last ~15 turns.
WORST_SD = 36.0
#: Spec §5: a turn is a distractor with this weight (while the chat has distractors).
DISTRACTOR_SHARE = 1 / 3


def chance_moments(max_turns: int, distractors: bool) -> tuple[float, float]:
    """E[T] and E[T²] of turns survived by a uniform yes/no reply: T = k < max_turns with
    probability p^k·(1-p), T = max_turns with p^max_turns, where p (a turn passes) is
    1/3 + 2/3·1/2 with distractors and 1/2 without."""
    p = DISTRACTOR_SHARE + (1 - DISTRACTOR_SHARE) / 2 if distractors else 0.5
    m1 = m2 = 0.0
    at = 1.0  # p^k
    for k in range(max_turns):
        m1 += k * at * (1 - p)
        m2 += k * k * at * (1 - p)
        at *= p
    return m1 + max_turns * at, m2 + max_turns ** 2 * at


def chance_spread(plan: RunPlan) -> float:
    """The population sd of turns survived over the planned chats at chance (each chat's own
    law, the chats pooled with equal weight)."""
    cap = plan.config["max_turns"]
    moments = [chance_moments(cap, bool(it.payload.get("pool"))) for it in plan.items]
    m1 = sum(m for m, _ in moments) / len(moments)
    m2 = sum(m for _, m in moments) / len(moments)
    return max(0.0, m2 - m1 * m1) ** 0.5


def stated_precision(plan: RunPlan) -> Precision:
    """±1.96·sd/√chats: sd measured at chance for the chance baseline, else the widest."""
    n = len(plan.items)
    if n == 0:
        return Precision(None, " turns", "no chats")
    facts = plan.model_facts
    if facts is not None and facts.at_chance:
        sd = chance_spread(plan)
        basis = (f"the spread at chance, {sd:.1f} turns: chats answered yes or no at random "
                 f"end each turn with probability 1/3 (1/2 without distractors), over {n} "
                 "chats")
    else:
        sd = WORST_SD
        basis = (f"at most: the widest spread of turns survived, {WORST_SD:.0f} turns (chats "
                 f"ending anywhere in 0-100), over {n} chats; a model whose chats end by turn "
                 "~15 spreads ~14")
    return Precision(Z95 * sd / n ** 0.5, " turns", basis)
