"""Scale-out: throughput over 1, 2 and 4 endpoints of fixed capacity, and what per-item affinity
saves in prefill on multi-turn chats (design §7: ≥ 3.5x at 4 endpoints; affinity keeps chats'
prefill linear). All in one run, against test servers on 127.0.0.1.

1. Throughput: each test server answers after a fixed service time and serves at most
   `--server-concurrency` requests at once (the rest queue), i.e. a server of fixed capacity.
   Single-turn items go through the real path (Session -> router -> aiohttp) with enough items
   in flight to fill every endpoint; items/s with 1, 2 and 4 endpoints.
2. Prefill: 20 Already Said That chats (the real benchmark episodes, played perfectly by the
   servers so every chat lasts all its turns) over 4 prefix-caching servers, once with the router
   (all turns of a chat on one server) and once round-robin per request (each turn on the next
   server). Prefilled = prompt tokens minus the ones the server had cached.

    python bench/scale_out.py [--service-time 0.05] [--server-concurrency 4] [--items-per-endpoint 200]
                              [--data-dir ../shared/data/already_said_that] [--chats 20]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import tempfile
import time
from pathlib import Path
from typing import Any

from mindprobe.core.options import build_options
from mindprobe.core.plan import Item, ModelFacts, PlanContext
from mindprobe.core.session import Session
from mindprobe.models import parse_model_spec
from mindprobe.models.base import CallContext, Completion, Model, Request
from mindprobe.registry import get_benchmark
from mindprobe.testing import server_group


def ast_oracle(body: dict) -> str:
    """Already Said That played perfectly: yes when the word was shown before in this chat."""
    shown = [m["content"] for m in body["messages"] if m["role"] == "user"]
    *before, last = shown
    return "[answer: yes]" if last in before else "[answer: no]"


async def _drive(model: Model, items: list[Item], play: Any, concurrency: int,
                 config: dict[str, Any] | None = None, options: Any = None) -> float:
    """Play every item through Sessions like the runner does; return the seconds it took."""
    model.configure(concurrency)
    await model.start()
    todo = list(reversed(items))
    t0 = time.perf_counter()

    async def worker() -> None:
        while todo:
            item = todo.pop()
            session = Session({"model": model}, item.id, seed=0, cache=None,
                              identities={"model": model.identity()}, config=config,
                              options=options)
            try:
                await play(item, session)
            finally:
                session.release()

    try:
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - t0
    finally:
        await model.close()


async def one_request(item: Item, session: Session) -> None:
    await session.generate(Request(messages=[{"role": "user", "content": item.payload}],
                                   max_tokens=4))


async def throughput(args: argparse.Namespace) -> dict[int, float]:
    rates: dict[int, float] = {}
    with server_group(*({} for _ in range(4)), latency=args.service_time,
                      max_concurrency=args.server_concurrency) as servers, \
            tempfile.TemporaryDirectory() as tmp:
        for n in (1, 2, 4):
            f = Path(tmp) / f"endpoints{n}.txt"
            f.write_text("".join(f"{s.base_url} concurrency={args.server_concurrency}\n"
                                 for s in servers[:n]))
            model = parse_model_spec("openai:test-model", endpoints_file=f)
            k = args.items_per_endpoint * n
            items = [Item(str(i), f"question {i}: is the sky blue?") for i in range(k)]
            secs = await _drive(model, items, one_request, 2 * args.server_concurrency * n)
            rates[n] = k / secs
            spread = [e["ok"] for e in model.endpoint_stats()]
            print(f"  {n} endpoint(s): {k:5d} items in {secs:5.2f} s = {rates[n]:7.1f} items/s "
                  f"(per endpoint: {spread})")
    return rates


class RoundRobin(Model):
    """The baseline without affinity: each request to the next server in turn."""

    def __init__(self, models: list[Model]) -> None:
        self.models = models
        self._next = itertools.cycle(models)
        self.spec = "round-robin"

    def configure(self, concurrency: int) -> None:
        for m in self.models:
            m.configure(concurrency)

    async def start(self) -> None:
        for m in self.models:
            await m.start()

    async def close(self) -> None:
        for m in self.models:
            await m.close()

    async def complete(self, request: Request, ctx: CallContext) -> Completion:
        return await next(self._next).complete(request, ctx)


async def prefill(args: argparse.Namespace) -> dict[str, dict[str, int]]:
    bench = get_benchmark("already_said_that")
    opts = build_options(bench.Options, {"n_samples": args.chats}, benchmark=bench.name)
    ctx = PlanContext(variant="distractorless", data_dir=Path(args.data_dir),
                      model=ModelFacts("openai:test-model"), warn=lambda m: None,
                      info=lambda m: None)
    plan = bench.plan(ctx, opts)
    out: dict[str, dict[str, int]] = {}
    for mode in ("affinity", "round-robin"):
        with server_group(*({} for _ in range(4)), simulate_prefix_cache=True,
                          responder=ast_oracle) as servers:
            urls = ",".join(s.base_url for s in servers)
            if mode == "affinity":
                model: Model = parse_model_spec(f"openai:test-model@{urls}")
            else:
                model = RoundRobin([parse_model_spec(f"openai:test-model@{s.base_url}")
                                    for s in servers])
            await _drive(model, plan.items, bench.run_item, args.chats, plan.config,
                         opts)
            stats = [s.stats() for s in servers]
        prompt = sum(s["prompt_tokens"] for s in stats)
        cached = sum(s["cached_prompt_tokens"] for s in stats)
        out[mode] = {"requests": sum(s["served_ok"] for s in stats), "prompt": prompt,
                     "prefilled": prompt - cached}
        print(f"  {mode:11}: {out[mode]['requests']} requests, prompt tokens sent "
              f"{prompt:,}, prefilled {prompt - cached:,}")
    return out


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--service-time", type=float, default=0.05)
    ap.add_argument("--server-concurrency", type=int, default=4)
    ap.add_argument("--items-per-endpoint", type=int, default=200)
    ap.add_argument("--chats", type=int, default=20)
    ap.add_argument("--data-dir", default=str(Path(__file__).resolve().parents[2]
                                              / "shared/data/already_said_that"))
    args = ap.parse_args()
    cap = args.server_concurrency / args.service_time
    print(f"throughput: servers of fixed capacity ({args.server_concurrency} at once x "
          f"{args.service_time * 1000:.0f} ms = {cap:.0f} req/s each)")
    rates = await throughput(args)
    print(f"  speed-up: 2 endpoints {rates[2] / rates[1]:.2f}x, 4 endpoints "
          f"{rates[4] / rates[1]:.2f}x (target >= 3.5x)")
    print(f"prefill: {args.chats} Already Said That chats (distractorless) over 4 endpoints")
    p = await prefill(args)
    a, r = p["affinity"], p["round-robin"]
    print(f"  round-robin prefills {r['prefilled'] / a['prefilled']:.2f}x the tokens of "
          f"affinity; affinity prefills {a['prompt'] / a['prefilled']:.1f}x fewer than it sends")


if __name__ == "__main__":
    asyncio.run(main())
