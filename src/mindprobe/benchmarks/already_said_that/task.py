"""Already Said That as a mindprobe benchmark: one item per sample, one 100-turn chat each.

Every turn sends the whole chat (as upstream does); on the `local` backend the session keeps
one llama.cpp slot for the chat, so only the new tokens of a turn are prefilled.
"""

from __future__ import annotations

from typing import Any

from mindprobe.benchmarks.already_said_that import data as ast_data
from mindprobe.benchmarks.already_said_that.episode import human_answer, run_episode
from mindprobe.benchmarks.already_said_that.estimate import estimate_tokens
from mindprobe.benchmarks.already_said_that.options import AlreadySaidThatOptions
from mindprobe.benchmarks.already_said_that.report import (
    estimate_results,
    results_of_records,
    side_by_side,
)
from mindprobe.core.benchmark import Benchmark, Item, PlanContext, RunPlan
from mindprobe.core.data import data_dir_for
from mindprobe.core.results import Results
from mindprobe.core.session import Session
from mindprobe.errors import UsageError

DEFAULT_SEED = 20220722
ANSWERS = ["[answer: yes]", "[answer: no]"]
HUMAN_HINT = "type y / n (or the answer to an unrelated question); no brackets needed"


class AlreadySaidThatBenchmark(Benchmark):
    name = "already_said_that"
    Options = AlreadySaidThatOptions
    data_files = list(ast_data.DATA_FILES)

    def plan(self, ctx: PlanContext, opts: AlreadySaidThatOptions) -> RunPlan:
        variant = ast_data.resolve_variant(ctx.variant)
        seed = DEFAULT_SEED if ctx.seed is None else ctx.seed
        n = opts.n_samples if ctx.limit is None else min(opts.n_samples, ctx.limit)
        root = data_dir_for(self.name, ctx.data_dir)
        samples = ast_data.load_samples(root)
        pool, example = ast_data.load_distractors(root, variant)
        selected = ast_data.select_samples(samples, min(n, len(samples)), seed)
        # The pool rides along with each item (same list object): episodes need it, the
        # manifest does not (its files' sha256 identify it).
        items = [Item(str(i), {"idx": i, "words": w, "pool": pool, "example": example})
                 for i, w in enumerate(selected)]
        config = {"seed": seed, "n_samples": opts.n_samples, "max_turns": opts.max_turns,
                  "variant": variant, "max_tokens": ctx.max_tokens or 128}
        files = [ast_data.SAMPLES_FILE]
        if variant in ast_data.DISTRACTOR_FILES:
            files.append(ast_data.DISTRACTOR_FILES[variant])
        provenance = {f.relpath: f.sha256 for f in files}
        return RunPlan(items=items, prompting="direct", config=config, provenance=provenance,
                       limit_applied=True)

    async def run_item(self, item: Item, session: Session) -> dict[str, Any]:
        cfg = session.config
        chat = session.chat()

        async def reply(messages: list[dict[str, str]]) -> str:
            chat.messages = list(messages)  # the episode owns the transcript (upstream's)
            comp = await chat.ask(None, max_tokens=cfg["max_tokens"], temperature=0.0,
                                  choices=ANSWERS, human_wrap=human_answer,
                                  human_hint=HUMAN_HINT)
            return comp.text

        p = item.payload
        return await run_episode(
            variant=cfg["variant"], idx=p["idx"], seed=cfg["seed"], words=p["words"],
            pool=p["pool"], example=p["example"], reply=reply, max_turns=cfg["max_turns"],
        )

    def results(self, records: list[dict[str, Any]], plan: RunPlan) -> Results:
        return results_of_records(records, plan.config.get("variant", "?"))

    def combine(self, by_variant: dict[str, Results]) -> Results | None:
        return side_by_side(by_variant)

    def estimate(self, plan: RunPlan, opts: AlreadySaidThatOptions) -> Results:
        cfg = plan.config
        first = plan.items[0].payload
        est = estimate_tokens(
            cfg["variant"], [it.payload["words"] for it in plan.items],
            first["pool"], first["example"], cfg["seed"], max_turns=cfg["max_turns"],
        )
        return estimate_results(cfg["variant"], est, _parse_price(opts.price))


def _parse_price(text: str | None) -> tuple[float, ...] | None:
    """`IN`, `IN,OUT` or `IN,OUT,CACHED_IN` in USD per million tokens."""
    if not text:
        return None
    try:
        parts = [float(x) for x in text.split(",")]
    except ValueError:
        parts = []
    if not 1 <= len(parts) <= 3 or any(p < 0 for p in parts):
        raise UsageError(f"--price expects IN, IN,OUT or IN,OUT,CACHED_IN in USD per million "
                         f"tokens, got {text!r}")
    return (parts[0], parts[1] if len(parts) > 1 else parts[0], *parts[2:])
