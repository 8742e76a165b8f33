"""Already Said That as a mindprobe benchmark: one item per sample, one 100-turn chat each.

Every turn sends the whole chat (as upstream does); on the `local` backend the session keeps
one llama.cpp slot for the chat, so only the new tokens of a turn are prefilled.

Solvers (`--solver`, the run's prompting label): `direct` answers with the `[answer: ...]` tag;
`cot` gets COT_INSTRUCTION appended to the current user message when it is sent, reasons, then
gives the tag, and only the tag enters the history of later turns (upstream's
`persistent_memory=False`), so prompts still grow linearly. A reasoning model's thinking
(reasoning_content / `<think>` block) is never scored nor put into the history, with either
solver; a turn cut off while the model was still thinking has no answer (a violation on a
main-task turn) and is marked `truncated_in_reasoning` in the transcript.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from mindprobe.benchmarks.already_said_that import data as ast_data
from mindprobe.benchmarks.already_said_that.episode import (
    Reply,
    cot_history,
    human_answer,
    run_episode,
)
from mindprobe.benchmarks.already_said_that.estimate import estimate_tokens
from mindprobe.benchmarks.already_said_that.options import AlreadySaidThatOptions
from mindprobe.benchmarks.already_said_that.prompt import COT_INSTRUCTION, with_cot_instruction
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
from mindprobe.models.base import Request

DEFAULT_SEED = 20220722
#: Default --max-tokens per turn: the answer tag, or a chain of thought ending in it; a model
#: known to think (`--reasoning`, or once a reply showed thinking) gets THINKING_ROOM more.
DIRECT_MAX_TOKENS = 128
COT_MAX_TOKENS = 1024
THINKING_ROOM = 4096
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
        default = COT_MAX_TOKENS if opts.solver == "cot" else DIRECT_MAX_TOKENS
        thinking = ctx.max_tokens or default + THINKING_ROOM
        thinks = "reasoning" in ctx.model.capabilities
        config = {"seed": seed, "n_samples": opts.n_samples, "max_turns": opts.max_turns,
                  "variant": variant, "solver": opts.solver,
                  "max_tokens": ctx.max_tokens or (thinking if thinks else default),
                  "max_tokens_thinking": thinking}
        if opts.solver == "cot":
            config["cot_instruction"] = COT_INSTRUCTION
            config["cot_history"] = ("only the reply's first [answer: ...] tag enters the chat "
                                     "history (else its last non-empty line, <= 200 chars)")
        files = [ast_data.SAMPLES_FILE]
        if variant in ast_data.DISTRACTOR_FILES:
            files.append(ast_data.DISTRACTOR_FILES[variant])
        provenance = {f.relpath: f.sha256 for f in files}
        return RunPlan(items=items, prompting=opts.solver, config=config,
                       provenance=provenance, limit_applied=True)

    async def run_item(self, item: Item, session: Session) -> dict[str, Any]:
        cfg = session.config
        cot = cfg.get("solver") == "cot"
        room = cfg.get("max_tokens_thinking", cfg["max_tokens"])

        async def reply(messages: list[dict[str, str]]) -> Reply:
            # The episode owns the transcript (upstream's); CoT adds its request to the sent
            # copy of the current user message only.
            sent = list(messages)
            if cot:
                sent[-1] = {**sent[-1], "content": with_cot_instruction(sent[-1]["content"])}
            max_tokens = cfg["max_tokens"]
            if session.model().can("reasoning"):
                max_tokens = max(max_tokens, room)
            req = Request(messages=sent, max_tokens=max_tokens, temperature=0.0,
                          choices=ANSWERS, human_wrap=human_answer, human_hint=HUMAN_HINT)
            comp = await session.generate(req)
            if comp.truncated_in_reasoning and room > req.max_tokens:
                comp = await session.generate(replace(req, max_tokens=room))
            return Reply(comp.text, history=cot_history(comp.text) if cot else None,
                         reasoning=comp.reasoning,
                         truncated_in_reasoning=comp.truncated_in_reasoning,
                         completion_tokens=comp.completion_tokens)

        p = item.payload
        return await run_episode(
            variant=cfg["variant"], idx=p["idx"], seed=cfg["seed"], words=p["words"],
            pool=p["pool"], example=p["example"], reply=reply, max_turns=cfg["max_turns"],
        )

    def results(self, records: list[dict[str, Any]], plan: RunPlan) -> Results:
        return results_of_records(records, plan.config.get("variant", "?"),
                                  plan.config.get("solver", "direct"),
                                  plan.config.get("max_turns"))

    def combine(self, by_variant: dict[str, Results]) -> Results | None:
        return side_by_side(by_variant)

    def estimate(self, plan: RunPlan, opts: AlreadySaidThatOptions) -> Results:
        cfg = plan.config
        first = plan.items[0].payload
        est = estimate_tokens(
            cfg["variant"], [it.payload["words"] for it in plan.items],
            first["pool"], first["example"], cfg["seed"], max_turns=cfg["max_turns"],
            solver=cfg.get("solver", "direct"),
        )
        res = estimate_results(cfg["variant"], est, _parse_price(opts.price))
        if opts.price and "," not in opts.price:
            res.notes.append("output tokens priced as input (--price IN); give IN,OUT for "
                             "the output price")
        return res


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
