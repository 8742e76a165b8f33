"""Harness overhead: mindprobe's runner vs a bare asyncio+aiohttp loop, same requests, one run.

2,000 single-turn items at concurrency 32 against the instant test server (a subprocess, so its
CPU is not counted), cache on (fresh file: every request is a miss and is written), records
written. Target: runner >= 70% of the bare loop's items/s and < 0.6 ms CPU per item.
`--whole-process` times `mindprobe run worldsense:test_set --limit N --reasks 0` as a subprocess
(start-up, data loading, analysis and exit included) against the bare loop (bench/bare_loop.py)
sending the same requests: the bodies the run sends, planned beforehand with mindprobe's own
WorldSense plan (target >= 0.65: the median of the rounds' ratios, each mindprobe run against
the bare loop just before it); it also prints the bare loop run as a program of its own.

    python bench/harness_overhead.py [--items 2000] [--concurrency 32] [--repeat 3]
    python bench/harness_overhead.py --whole-process --items 20000 --data-dir ../shared/data/worldsense
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bare_loop import bare_loop
from rich.console import Console

from mindprobe.core.benchmark import Item
from mindprobe.core.cache import ResponseCache
from mindprobe.core.loop import loop_name, run_async
from mindprobe.core.runner import PassSettings, execute
from mindprobe.core.session import Session
from mindprobe.core.store import RunStore, base_manifest
from mindprobe.models import parse_model_spec
from mindprobe.models.base import CallContext, Completion, Model, Request


async def echo_item(item: Item, session: Session) -> dict[str, Any]:
    """A minimal single-turn episode: one chat request per item, record the answer."""
    c = await session.generate(Request(messages=[{"role": "user", "content": item.payload}],
                                       max_tokens=8))
    return {"answer": c.text}


def _prompt(i: int) -> str:
    return f"Question {i}: is the sky blue? Only respond with one of these 2 options: 'TRUE', 'FALSE'."


def echo_bodies(n: int) -> list[dict[str, Any]]:
    """The bodies `echo_item` makes mindprobe send (the in-process comparison)."""
    return [{"model": "test-model", "messages": [{"role": "user", "content": _prompt(i)}],
             "max_tokens": 8, "temperature": 0.0} for i in range(n)]


class _Recorder(Model):
    """Answers at once, as the test server does ("OK"), and keeps the body each request would
    have sent to `wire`: the episode itself says what the run sends."""

    def __init__(self, wire: Model) -> None:
        self.wire, self.bodies = wire, []
        self.spec, self.label, self.capabilities = wire.spec, wire.label, wire.capabilities

    async def complete(self, request: Request, ctx: CallContext) -> Completion:
        self.bodies.append(self.wire.build_body(request)[1])
        return Completion(text="OK")


def worldsense_bodies(url: str, n: int, data_dir: str) -> list[dict[str, Any]]:
    """The bodies `mindprobe run worldsense:test_set --limit n --reasks 0` sends (same plan,
    same episode): the bare loop sends the same requests as the run."""
    from mindprobe.core.benchmark import ModelFacts, PlanContext
    from mindprobe.core.options import build_options
    from mindprobe.registry import get_benchmark

    bench = get_benchmark("worldsense")
    model = _Recorder(parse_model_spec(f"openai:test-model@{url}"))
    ctx = PlanContext(variant="test_set", seed=None, data_dir=Path(data_dir), limit=n,
                      max_tokens=None, model=ModelFacts(model.spec, model.label,
                                                        model.capabilities, None),
                      roles={}, warn=print, info=print)
    opts = build_options(bench.Options, {"reasks": 0}, benchmark="worldsense")
    plan = bench.plan(ctx, opts)

    async def play_all() -> None:
        for it in plan.items:
            await bench.run_item(it, Session({"model": model}, it.id, seed=0, cache=None,
                                             identities={}, config=plan.config,
                                             options=opts, prompting=plan.prompting))

    asyncio.run(play_all())
    return model.bodies


async def runner_loop(url: str, n: int, concurrency: int, tmp: Path) -> None:
    model = parse_model_spec(f"openai:test-model@{url}")
    await model.start()
    cache = ResponseCache(tmp / f"cache-{time.monotonic_ns()}.sqlite")
    store = RunStore(tmp / f"run-{time.monotonic_ns()}")
    done = store.open(base_manifest(benchmark="bench", variant="v", model={}, config={}, data={}))
    items = [Item(str(i), _prompt(i)) for i in range(n)]
    try:
        await execute(items, echo_item, {"model": model}, store, done,
                      PassSettings(concurrency=concurrency, cache=cache),
                      console=Console(stderr=True, quiet=True), description="bench")
    finally:
        store.close("finished")
        cache.close()
        await model.close()


async def whole_process(url: str, n: int, concurrency: int, tmp: Path, data_dir: str) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mindprobe.cli", "run", "worldsense:test_set", "--model",
        f"openai:test-model@{url}", "--limit", str(n), "--concurrency", str(concurrency),
        "--runs-dir", str(tmp / f"runs-{time.monotonic_ns()}"), "--no-cache",
        "--data-dir", data_dir, "--reasks", "0",  # one request per item, as the bare loop
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL)
    if await proc.wait() not in (0, 1):
        raise SystemExit("mindprobe run failed")


async def bare_process(url: str, bodies_file: Path, concurrency: int) -> None:
    """The bare loop as a program of its own (interpreter start, aiohttp import and reading the
    bodies included), for a like-for-like view of the whole-process number; the target uses
    `bare_loop` in this process."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(Path(__file__).with_name("bare_loop.py")), url, str(bodies_file),
        str(concurrency))
    if await proc.wait() != 0:
        raise SystemExit("the bare loop process failed")


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (a whole-process run)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def measure(fn, *args, run=asyncio.run) -> tuple[float, float]:
    """(wall, CPU) seconds of one call; CPU includes a child process it waited for."""
    c0, t0 = _cpu(), time.perf_counter()
    run(fn(*args))
    return time.perf_counter() - t0, _cpu() - c0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--whole-process", action="store_true",
                    help="time `mindprobe run worldsense:test_set` as a whole process")
    ap.add_argument("--data-dir", default="../shared/data/worldsense")
    a = ap.parse_args()
    srv = subprocess.Popen([sys.executable, "-m", "mindprobe.testing.server", "--port", "0"],
                           stdout=subprocess.PIPE, text=True)
    try:
        line = srv.stdout.readline().split()
        url = line[1]
        with tempfile.TemporaryDirectory() as d:
            bodies = (worldsense_bodies(url, a.items, a.data_dir) if a.whole_process
                      else echo_bodies(a.items))
            bodies_file = Path(d) / "bodies.json"
            bodies_file.write_text(json.dumps(bodies))
            asyncio.run(bare_loop(url, bodies[:200], a.concurrency))  # warm-up
            rows, procs = [], []
            for _ in range(a.repeat):  # interleave so both see the same machine load
                bw, bc = measure(bare_loop, url, bodies, a.concurrency)
                if a.whole_process:  # CPU: the child's (the test server's is not counted)
                    rw, rc = measure(whole_process, url, a.items, a.concurrency, Path(d),
                                     a.data_dir)
                    procs.append(measure(bare_process, url, bodies_file, a.concurrency)[0])
                else:
                    # on the loop `mindprobe run` uses (uvloop where installed)
                    rw, rc = measure(runner_loop, url, a.items, a.concurrency, Path(d),
                                     run=run_async)
                rows.append((bw, bc, rw, rc))
        bw, bc, rw, rc = (min(r[i] for r in rows) for i in range(4))
        n = len(bodies)  # WorldSense --limit rounds up to whole tuples
        print(f"items={n} concurrency={a.concurrency} (best of {a.repeat})")
        print(f"bare aiohttp : {n / bw:8.0f} items/s  {1000 * bc / n:.3f} ms CPU/item")
        print(f"mindprobe    : {n / rw:8.0f} items/s  {1000 * rc / n:.3f} ms CPU/item")
        target = 0.65 if a.whole_process else 0.7
        print(f"ratio        : {bw / rw:.2f} of bare items/s (target >= {target}); "
              f"mindprobe's event loop: {loop_name()}")
        pairs = sorted(r[0] / r[2] for r in rows)  # each run against the bare loop just before
        print(f"per-run ratios: {' '.join(f'{x:.2f}' for x in pairs)} "
              f"(median {statistics.median(pairs):.2f}, min {pairs[0]:.2f}, max {pairs[-1]:.2f};"
              " the machine's speed drifts between runs)")
        print(f"CPU per item, median of the rounds: bare "
              f"{1000 * statistics.median(r[1] for r in rows) / n:.3f} ms, mindprobe "
              f"{1000 * statistics.median(r[3] for r in rows) / n:.3f} ms")
        if procs:
            print(f"bare loop as a process of its own (start-up and imports included): "
                  f"{n / min(procs):.0f} items/s; mindprobe at {min(procs) / rw:.2f} of that")
    finally:
        srv.terminate()
        srv.wait()


if __name__ == "__main__":
    main()
