"""Prefix reuse on 100-turn Already Said That chats with the embedded `local` model.

One chat per variant, driven through all turns even after the (small) model's first mistake.
Prints prompt tokens actually prefilled vs what a resend-everything client sends, and wall
time per turn at turn 10 vs turn 90 (flat = linear cost).

    python bench/ast_prefix_reuse.py [--data-dir ../shared/data/already_said_that] [--turns 100]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path

from mindprobe.benchmarks.already_said_that import (
    VARIANTS,
    load_distractors,
    load_samples,
    run_episode,
    task_description,
    templates,
)
from mindprobe.core.session import Session
from mindprobe.models import parse_model_spec
from mindprobe.models.base import Request


async def chat(model, variant: str, words, pool, system, turns: int, max_tokens: int):
    session = Session({"model": model}, variant, seed=0, cache=None,
                      identities={"model": model.identity()})
    rows: list[tuple[int, int, float]] = []

    async def reply(messages):
        t0 = time.perf_counter()
        c = await session.generate(Request(messages=messages, max_tokens=max_tokens))
        rows.append((c.prompt_tokens, c.cached_prompt_tokens, time.perf_counter() - t0))
        return c.text

    await run_episode(variant=variant, idx=0, seed=20220722, words=words, pool=pool,
                      system=system, reply=reply, max_turns=turns, drive_all_turns=True)
    session.release()
    return rows


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=str(Path(__file__).resolve().parents[2] / "shared/data/already_said_that"))
    ap.add_argument("--turns", type=int, default=100)
    ap.add_argument("--max-tokens", type=int, default=8)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    a = ap.parse_args()
    words = load_samples(a.data_dir)[0]
    model = parse_model_spec("local")
    model.configure(1)
    await model.start()
    try:
        print(f"{'variant':24} {'resend':>9} {'prefilled':>9} {'ratio':>6} {'s/turn@10':>9} {'s/turn@90':>9}")
        for variant in a.variants.split(","):
            pool, example = load_distractors(a.data_dir, variant)
            system = task_description(templates(Path(a.data_dir))["task_description"], example)
            rows = await chat(model, variant, words, pool, system, a.turns, a.max_tokens)
            resend = sum(p for p, _, _ in rows)
            prefilled = sum(p - c for p, c, _ in rows)
            t10 = sum(t for _, _, t in rows[5:15]) / 10
            t90 = sum(t for _, _, t in rows[85:95]) / 10 if len(rows) >= 95 else float("nan")
            print(f"{variant:24} {resend:9,} {prefilled:9,} {resend / max(prefilled, 1):6.1f} "
                  f"{t10:9.3f} {t90:9.3f}")
    finally:
        await model.close()


if __name__ == "__main__":
    asyncio.run(main())
