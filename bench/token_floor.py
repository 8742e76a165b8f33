"""Prefill against the unique-token floor, every benchmark, on the embedded engine.

For a small fixed slice of each benchmark, the same items are run three ways on the embedded
model (Gemma 3 270M, llama.cpp via xllamacpp): concurrency 1; concurrency 4 on one server with
4 slots; concurrency 4 on 2 endpoints (two in-process servers of 2 slots through the router).
For each it reports

* sent: prompt tokens of every request, as the engine counted them;
* prefilled: prompt tokens the engine actually evaluated (its own counter per request,
  llama.cpp's `timings.prompt_n`; tokens reused from a slot's KV, or copied from another slot,
  are not prefilled);
* floor: tokens of the distinct prefixes of the requests themselves: the nodes of a token trie
  over every request's prompt as the server tokenizes it, less those the model generated
  itself (a reply that a later prompt repeats is in the KV already): what no cache can avoid;
* prefilled/floor, completion tokens, wall time, and whether records and metrics equal those
  at concurrency 1 (the engine runs plain, not repacked, kernels, so batching short prompts
  with other slots' requests does not change greedy replies; how a long prompt is cut into
  batch steps shared with other slots still can, now and then).

Targets (design §7): prefilled/floor <= 1.10 at c1, <= 1.25 at c4 and on 2 endpoints.

    python bench/token_floor.py [--data-root ../shared/data] [--only sort,mr_gsm8k]
                                [--modes c1,c4,2ep] [--threads N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rich.console import Console

from mindprobe.core.options import build_options
from mindprobe.core.plan import ModelFacts, PlanContext
from mindprobe.core.runner import PassSettings, execute
from mindprobe.core.store import RunStore
from mindprobe.models.base import Request
from mindprobe.models.endpoints import EndpointSpec
from mindprobe.models.local import DEFAULT_MODEL_NAME, LocalModel
from mindprobe.models.router import RouterModel
from mindprobe.registry import get_benchmark


@dataclass
class Slice:
    name: str
    bench: str
    variant: str
    options: dict[str, Any]
    limit: int | None = None
    max_tokens: int | None = None
    data: str | None = None


SLICES = [
    Slice("already_said_that", "already_said_that", "which-is-heavier",
          {"n_samples": 24, "max_turns": 8, "temperature": 0.0}, data="already_said_that"),
    Slice("mr_gsm8k 1-shot", "mr_gsm8k", "sample", {"shots": 1}, limit=8, max_tokens=48,
          data="mr_gsm8k"),
    Slice("sort 1000-20", "sort", "1000-20", {"books": "73017", "excerpts": 2}, data="sort"),
    Slice("worldsense in-context", "worldsense", "fresh",
          {"prompting": "incontext-iid", "shots": 2}, limit=8, max_tokens=16),
    Slice("fanoutqa closedbook", "fanoutqa", "closedbook", {}, limit=24, max_tokens=48,
          data="fanoutqa"),
]


class Recorder:
    """The model as the benchmark sees it, noting every request (for the floor)."""

    def __init__(self, model: Any) -> None:
        self._model = model
        #: (item id, call index, request, candidates scored, reply text)
        self.requests: list[tuple[str, int, Request, list[str] | None, str]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    @staticmethod
    def _copy(request: Request) -> Request:
        msgs = [dict(m) for m in request.messages] if request.messages is not None else None
        return replace(request, messages=msgs)

    async def complete(self, request: Request, ctx: Any) -> Any:
        sent = self._copy(request)
        comp = await self._model.complete(request, ctx)
        self.requests.append((ctx.item_id, ctx.call_index, sent, None, comp.text))
        return comp

    async def score_choices(self, request: Request, candidates: list[str], ctx: Any) -> Any:
        sent = self._copy(request)
        scores = await self._model.score_choices(request, candidates, ctx)
        self.requests.append((ctx.item_id, ctx.call_index, sent, list(candidates), ""))
        return scores


class InProcessReplicas:
    """A router launcher starting `n` embedded servers in this process (Ray's stand-in). They
    are on one machine, so they save slots into one folder: a prefix one server prefilled is
    restored by the other from its file instead of prefilled again."""

    gguf = None  # the embedded model: a base model, as `local`

    def __init__(self, n: int, threads: int | None) -> None:
        self.n = n
        self.threads = threads
        self.models: list[LocalModel] = []
        self._folder: tempfile.TemporaryDirectory[str] | None = None

    async def start(self, slots: int, timeout: float) -> list[EndpointSpec]:
        self._folder = tempfile.TemporaryDirectory(prefix="mindprobe-slots-")
        for _ in range(self.n):
            m = LocalModel(None, spec="local", threads=self.threads, slot_dir=self._folder.name)
            m.configure(slots)
            await m.start()
            self.models.append(m)
        return [EndpointSpec(url=m.base_url, concurrency=slots, key=m._api_key,
                             source=f"in-process server {i + 1}", llama_slots=True,
                             slot_dir=self._folder.name)
                for i, m in enumerate(self.models)]

    async def stop(self) -> None:
        for m in self.models:
            await m.close()
        self.models = []
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None

    def identity(self) -> dict[str, Any]:
        return self.models[0].identity() if self.models else {}

    def pending(self) -> list[str]:
        return [f"in-process server {i + 1}" for i in range(self.n)]


def build(mode: str, threads: int | None) -> tuple[Any, int]:
    if mode == "c1":
        return LocalModel(None, spec="local", threads=threads), 1
    if mode == "c4":
        return LocalModel(None, spec="local", threads=threads), 4
    router = RouterModel(DEFAULT_MODEL_NAME, None, spec="local", label=DEFAULT_MODEL_NAME,
                         group="in-process", launcher=InProcessReplicas(2, threads))
    return router, 4


class Trie:
    def __init__(self) -> None:
        self.root: dict[int, Any] = {}
        self.nodes = 0

    def add(self, tokens: list[int], count: bool = True) -> None:
        node = self.root
        for t in tokens:
            nxt = node.get(t)
            if nxt is None:
                nxt = node[t] = {}
                self.nodes += count
            node = nxt


async def floor_tokens(tok: LocalModel, requests: list[tuple[str, int, Request,
                                                         list[str] | None, str]]) -> int:
    """Distinct-prefix prompt tokens of the requests as the server tokenizes them (in plan
    order, so every mode gets the same floor), not counting what the model generated."""
    async def again(call: Any) -> Any:
        for attempt in range(3):  # a kept-alive connection the server just closed: once more
            try:
                return await call()
            except Exception:  # noqa: BLE001
                if attempt == 2:
                    raise

    async def tokens(text: str) -> list[int]:
        out = await again(lambda: tok._post_root("/tokenize", {"content": text,
                                                               "add_special": True}))
        return [int(t) for t in out.get("tokens") or []]

    trie = Trie()
    for _, _, req, candidates, reply in sorted(requests, key=lambda r: (r[0], r[1])):
        text = await again(lambda r=req: tok._rendered(r))
        ids = await tokens(text)
        trie.add(ids)
        for cand in candidates or []:  # each forced candidate token is one more prefix
            trie.add(ids + await again(lambda c=cand: tok._candidate_tokens(c)))
        if reply:
            trie.add(await tokens(text + reply), count=False)
    return trie.nodes


async def run_slice(sl: Slice, mode: str, data_root: Path, threads: int | None,
                    tmp: Path) -> dict[str, Any]:
    bench = get_benchmark(sl.bench)
    opts = build_options(bench.Options, sl.options, benchmark=sl.bench)
    model, concurrency = build(mode, threads)
    model.configure(concurrency)
    await model.start()
    try:
        facts = ModelFacts(model.spec, model.label, model.capabilities, model.context_window)
        ctx = PlanContext(variant=sl.variant, data_dir=data_root / sl.data if sl.data else None,
                          limit=sl.limit, max_tokens=sl.max_tokens, model=facts,
                          warn=lambda m: None, info=lambda m: None)
        plan = bench.plan(ctx, opts)
        plan.options = opts  # as the engine does: results read the run's typed options
        if sl.limit is not None and not plan.limit_applied:
            plan.items = plan.items[: sl.limit]
        rec = Recorder(model)
        store = RunStore(tmp / f"{sl.bench}-{mode}")
        store.open({"benchmark": sl.bench, "variant": sl.variant, "model": "local",
                    "config": plan.config, "data": plan.provenance})
        settings = PassSettings(concurrency=concurrency, config=plan.config, options=opts,
                                prompting=plan.prompting, resources=plan.resources)
        for r in plan.resources.values():
            await r.start()
        t0 = time.perf_counter()
        try:
            result = await execute(plan.items, bench.run_item, {"model": rec}, store, {},
                                   settings, console=Console(stderr=True, quiet=True),
                                   description=sl.name)
        finally:
            for r in plan.resources.values():
                await r.close()
            store.close("finished")
        wall = time.perf_counter() - t0
        sent = prefilled = completion = 0
        for r in result.records:
            u = (r.get("usage") or {}).get("model") or {}
            sent += u.get("prompt_tokens", 0)
            prefilled += u.get("prompt_tokens", 0) - u.get("cached_prompt_tokens", 0)
            completion += u.get("completion_tokens", 0)
        tok = model if isinstance(model, LocalModel) else model._eps[0].client
        floor = await floor_tokens(tok, rec.requests)
        res = bench.results(result.records, plan)
        strip = ("usage", "latency", "prompt_tokens", "max_context_source")
        # By id: records are written as items finish, an order concurrency changes.
        records = sorted(({k: v for k, v in r.items() if k not in strip}
                          for r in result.records), key=lambda r: str(r.get("id")))
        return {"sent": sent, "prefilled": prefilled, "floor": floor,
                "completion": completion, "wall": wall, "errors": result.errors,
                "records": json.dumps(records, sort_keys=True, default=str),
                "metrics": json.dumps(res.to_json(), sort_keys=True, default=str)}
    finally:
        await model.close()


@dataclass
class Row:
    name: str
    by_mode: dict[str, dict[str, Any]] = field(default_factory=dict)


def show(rows: list[Row], modes: list[str]) -> None:
    print()
    print("benchmark               " + "  ".join(f"{m:>4} prefilled/floor" for m in modes))
    for row in rows:
        ratios = "  ".join(f"{m} {row.by_mode[m]['prefilled'] / max(1, row.by_mode[m]['floor']):.2f}x"
                           for m in modes if m in row.by_mode)
        print(f"{row.name:24}{ratios}")
    print()
    head = (f"{'benchmark':24}{'mode':>5}{'sent':>9}{'prefilled':>10}{'floor':>8}{'ratio':>7}"
            f"{'compl.':>8}{'wall s':>8}{'same as c1':>17}")
    print(head)
    for row in rows:
        base = row.by_mode.get("c1")
        for m in modes:
            d = row.by_mode.get(m)
            if d is None:
                continue
            same = "-" if m == "c1" or base is None else (
                "records+metrics" if d["records"] == base["records"] else
                "metrics" if d["metrics"] == base["metrics"] else "differ")
            print(f"{row.name:24}{m:>5}{d['sent']:>9,}{d['prefilled']:>10,}{d['floor']:>8,}"
                  f"{d['prefilled'] / max(1, d['floor']):>6.2f}x{d['completion']:>8,}"
                  f"{d['wall']:>8.1f}{same:>17}" + (f"  ({d['errors']} errors)"
                                                     if d["errors"] else ""))
    for row in rows:  # what differs, where records do
        base = row.by_mode.get("c1")
        for m in modes:
            d = row.by_mode.get(m)
            if m == "c1" or d is None or base is None or d["records"] == base["records"]:
                continue
            print(f"  {row.name} {m}: {record_difference(base['records'], d['records'])}")


def record_difference(a: str, b: str) -> str:
    """How two runs' records differ: how many records, and in which fields."""
    ra, rb = json.loads(a), json.loads(b)
    if len(ra) != len(rb):
        return f"{len(ra)} records against {len(rb)}"
    fields: set[str] = set()
    n = 0
    for x, y in zip(ra, rb, strict=True):
        keys = {k for k in {*x, *y} if x.get(k) != y.get(k)}
        n += bool(keys)
        fields |= keys
    return f"{n} of {len(ra)} records differ, in {', '.join(sorted(fields))}"


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-root", default=str(Path(__file__).resolve().parents[2]
                                               / "shared" / "data"))
    ap.add_argument("--only", help="comma-separated benchmark names")
    ap.add_argument("--modes", default="c1,c4,2ep")
    ap.add_argument("--threads", type=int)
    a = ap.parse_args()
    # Scoring reads gold data from the data folder too (FanOutQA's questions), as runs do.
    os.environ.setdefault("MINDPROBE_DATA_DIR", str(Path(a.data_root).resolve()))
    modes = a.modes.split(",")
    slices = [s for s in SLICES if not a.only or s.bench in a.only.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for sl in slices:
            row = Row(sl.name)
            for mode in modes:
                row.by_mode[mode] = await run_slice(sl, mode, Path(a.data_root), a.threads,
                                                    Path(tmp))
                d = row.by_mode[mode]
                print(f"{sl.name} {mode}: prefilled {d['prefilled']} floor {d['floor']} "
                      f"wall {d['wall']:.1f}s", flush=True)
            rows.append(row)
    show(rows, modes)


if __name__ == "__main__":
    asyncio.run(main())
