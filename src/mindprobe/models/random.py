"""The chance baseline: a uniform pick from the item's allowed answers.

Randomness is derived from (seed, item, call number), not from a shared generator, so results
do not depend on concurrency or on which items a resumed run still had to do.
"""

from __future__ import annotations

import math
import random
import time

from mindprobe.core.model import CallContext, ChoiceScores, Completion, Model, Request
from mindprobe.errors import UsageError


class RandomModel(Model):
    cacheable = False
    default_concurrency = 64
    at_chance = True
    capabilities = frozenset({"logprobs"})
    free_text = False  # it picks from a request's closed answer set

    def __init__(self, spec: str = "random") -> None:
        self.spec = spec
        self.label = "random"

    def identity(self) -> dict[str, str]:
        return {"model": "random"}

    async def complete(self, request: Request, ctx: CallContext) -> Completion:
        if not request.choices:
            raise UsageError(
                "the random model needs a closed answer set, and this benchmark item has none"
            )
        t0 = time.perf_counter()
        rng = random.Random(f"{ctx.seed}:{ctx.item_id}:{ctx.call_index}")
        text = rng.choice(request.choices)
        logprobs = [{"token": text, "logprob": 0.0, "top": {text: 0.0}}] \
            if request.logprobs else None  # the pick is certain: a uniform random answer
        return Completion(text=text, latency=time.perf_counter() - t0, finish_reason="stop",
                          logprobs=logprobs)

    async def score_choices(self, request: Request, candidates: list[str],
                            ctx: CallContext) -> ChoiceScores:
        """Random log-probs: the argmax is a uniform pick, as with replies."""
        rng = random.Random(f"{ctx.seed}:{ctx.item_id}:{ctx.call_index}")
        vals = [math.log(rng.random() or 1e-12) for _ in candidates]
        return ChoiceScores(list(candidates), list(vals), list(vals), method="random",
                            requests=0)
