"""Already Said That as a mindprobe benchmark: one item per sample, one 100-turn chat each.

Every turn sends the whole chat (as upstream does); on the `local` backend the session keeps
one llama.cpp slot for the chat, so only the new tokens of a turn are prefilled.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from rich.console import Console

from mindprobe.benchmarks.already_said_that import data as ast_data
from mindprobe.benchmarks.already_said_that.episode import human_answer, run_episode
from mindprobe.benchmarks.already_said_that.estimate import estimate_tokens
from mindprobe.benchmarks.already_said_that.metrics import aggregate
from mindprobe.benchmarks.already_said_that.report import render_side_by_side, render_variant
from mindprobe.core.benchmark import Item, Prepared, RunOptions
from mindprobe.core.data import data_dir_for
from mindprobe.core.session import Session
from mindprobe.errors import UsageError
from mindprobe.models.base import Request

DEFAULT_SEED = 20220722
DEFAULT_N_SAMPLES = 250
ANSWERS = ["[answer: yes]", "[answer: no]"]
HUMAN_HINT = "type y / n (or the answer to an unrelated question); no brackets needed"


class AlreadySaidThatBenchmark:
    name = "already_said_that"
    title = "working memory under distractors: turns survived in a 100-turn chat"
    variants = {v: f"distractors: {v}" for v in ast_data.VARIANTS}
    variants["distractorless"] = "no distractor questions"
    default_variant = "reverse-sort-words-eng"
    variant_groups = {"all": list(ast_data.VARIANTS)}
    json_by_variant = True
    data_files = list(ast_data.DATA_FILES)
    commands: dict[str, Any] = {}

    def add_arguments(self, group: argparse._ArgumentGroup) -> None:
        group.add_argument("--n-samples", type=int, default=DEFAULT_N_SAMPLES,
                           help="already_said_that: samples drawn from the 500 (default 250)")
        group.add_argument("--max-turns", type=int, default=100,
                           help="already_said_that: turns per chat (default 100)")
        group.add_argument("--estimate", action="store_true",
                           help="already_said_that: print the tokens (and cost) a run would "
                           "take, with and without prefix reuse, then exit")
        group.add_argument("--price", help="already_said_that: with --estimate, USD per million "
                           "tokens: IN or IN,OUT (e.g. 2.5,10)")

    def prepare(self, opts: RunOptions) -> Prepared:
        variant = ast_data.resolve_variant(opts.variant)
        seed = DEFAULT_SEED if opts.seed is None else opts.seed
        n = int(opts.extra.get("n_samples") or DEFAULT_N_SAMPLES)
        max_turns = int(opts.extra.get("max_turns") or 100)
        if n < 1 or max_turns < 1:
            raise UsageError("--n-samples and --max-turns must be positive")
        root = data_dir_for(self.name, opts.data_dir)
        samples = ast_data.load_samples(root)
        pool, example = ast_data.load_distractors(root, variant)
        selected = ast_data.select_samples(samples, min(n, len(samples)), seed)
        # The pool rides along with each item (same list object): episodes need it, the
        # manifest does not (its files' sha256 identify it).
        items = [Item(str(i), {"idx": i, "words": w, "pool": pool, "example": example})
                 for i, w in enumerate(selected)]
        config = {"seed": seed, "n_samples": n, "max_turns": max_turns, "variant": variant,
                  "max_tokens": opts.extra.get("max_tokens") or 128}
        files = [ast_data.SAMPLES_FILE]
        if variant in ast_data.DISTRACTOR_FILES:
            files.append(ast_data.DISTRACTOR_FILES[variant])
        data = {f.relpath: f.sha256 for f in files}
        return Prepared(items=items, prompting="direct", config=config, data=data)

    async def run_item(self, item: Item, session: Session) -> dict[str, Any]:
        cfg = session.config

        async def reply(messages: list[dict[str, str]]) -> str:
            req = Request(messages=messages, max_tokens=cfg["max_tokens"], temperature=0.0,
                          choices=ANSWERS, human_wrap=human_answer, human_hint=HUMAN_HINT)
            return (await session.generate(req)).text

        return await run_episode(
            variant=cfg["variant"], idx=item.data["idx"], seed=cfg["seed"],
            words=item.data["words"], pool=item.data["pool"], example=item.data["example"],
            reply=reply, max_turns=cfg["max_turns"],
        )

    def metrics(self, records: list[dict[str, Any]], prepared: Prepared) -> dict[str, Any]:
        ok = [r for r in records if "error" not in r]
        if not ok:
            return {"n_samples": 0, "headline": None}
        m = {k: (None if isinstance(v, float) and math.isnan(v) else v)
             for k, v in aggregate(ok).items()}
        return {**m, "n_samples": len(ok), "headline": {"avg_num_turns": m["avg_num_turns"]}}

    def render(self, metrics: dict[str, Any], console: Console) -> None:
        render_variant(metrics, console)

    def render_side_by_side(self, docs: dict[str, dict[str, Any]], console: Console) -> None:
        render_side_by_side(docs, console)

    def estimate(self, prepared: Prepared, opts: RunOptions, console: Console) -> None:
        from mindprobe.benchmarks.already_said_that.report import render_estimate

        cfg = prepared.config
        first = prepared.items[0].data
        est = estimate_tokens(
            cfg["variant"], [it.data["words"] for it in prepared.items],
            first["pool"], first["example"], cfg["seed"], max_turns=cfg["max_turns"],
        )
        render_estimate(cfg["variant"], est, _parse_price(opts.extra.get("price")), console)


def _parse_price(text: str | None) -> tuple[float, float] | None:
    if not text:
        return None
    try:
        parts = [float(x) for x in text.split(",")]
    except ValueError:
        raise UsageError(f"--price expects IN or IN,OUT in USD per million tokens, got {text!r}") from None
    return (parts[0], parts[1] if len(parts) > 1 else parts[0])

