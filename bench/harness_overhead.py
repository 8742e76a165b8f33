"""Harness overhead: mindprobe's runner vs a bare asyncio+aiohttp loop, same requests, one run.

2,000 single-turn items at concurrency 32 against the instant test server (a subprocess, so its
CPU is not counted), cache on (fresh file: every request is a miss and is written), records
written. Target: runner >= 70% of the bare loop's items/s and < 0.6 ms CPU per item.

`--whole-process` follows issue #44's method: `mindprobe run worldsense:test_set --limit N
--reasks 0` as a subprocess (start-up, plan, records, results and exit included) against the
bare loop (bench/bare_loop.py) sending **the same request bodies, read from mindprobe's own
records** (a first run, untimed, writes them and warms the data memo), with the data memo warm
(a cache folder of the bench's own, so the user's is neither read nor touched) and the
response cache fresh (a new, empty file each round: every request a miss, and written). Target
>= 0.65: the median of the rounds' ratios, each mindprobe run against the bare loop just before
it (min and max printed). It also prints the bare loop run as a program of its own.

The children run without PYTHONDONTWRITEBYTECODE (a development shell may set it): an
installed package has its bytecode, and recompiling every module at each start is not what a
user's run pays.

    python bench/harness_overhead.py [--items 2000] [--concurrency 32] [--repeat 3]
    python bench/harness_overhead.py --whole-process --items 20000 --repeat 5 \
        --data-dir ../shared/data/worldsense
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
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

from mindprobe.core.cache import ResponseCache
from mindprobe.core.loop import loop_name, run_async
from mindprobe.core.plan import Item
from mindprobe.core.runner import PassSettings, execute
from mindprobe.core.session import Session
from mindprobe.core.store import RunStore, base_manifest
from mindprobe.models import parse_model_spec
from mindprobe.models.base import Request


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


def child_env(cache_dir: Path) -> dict[str, str]:
    """The environment of a timed child: the bench's own mindprobe cache folder (the user's is
    not touched), and bytecode allowed, as in a user's install."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["MINDPROBE_CACHE_DIR"] = str(cache_dir)
    return env


def mindprobe_run(url: str, n: int, concurrency: int, runs_dir: Path, data_dir: str,
                  cache: Path, env: dict[str, str]) -> list[str]:
    """The command line of `mindprobe run worldsense:test_set`, one request per trial."""
    return [sys.executable, "-m", "mindprobe.cli", "run", "worldsense:test_set", "--model",
            f"openai:test-model@{url}", "--limit", str(n), "--concurrency", str(concurrency),
            "--runs-dir", str(runs_dir), "--cache", str(cache), "--data-dir", data_dir,
            "--reasks", "0"]


def records_file(runs_dir: Path) -> Path:
    """The one run's records.jsonl under `runs_dir`."""
    found = list(runs_dir.rglob("records.jsonl"))
    if len(found) != 1:
        raise SystemExit(f"expected one run under {runs_dir}, found {len(found)}")
    return found[0]


def bodies_from_records(path: Path, model: str = "test-model") -> list[dict[str, Any]]:
    """The chat bodies mindprobe sent, rebuilt from its own records (`request`: the messages
    and the sampling parameters), in the order it recorded them."""
    bodies = []
    with path.open() as f:
        for line in f:
            req = json.loads(line)["request"]
            bodies.append({"model": model, "messages": req["messages"], **req["params"]})
    return bodies


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


async def whole_process(cmd: list[str], env: dict[str, str]) -> None:
    proc = await asyncio.create_subprocess_exec(*cmd, env=env, stdout=asyncio.subprocess.DEVNULL,
                                                stderr=asyncio.subprocess.DEVNULL)
    if await proc.wait() not in (0, 1):
        raise SystemExit(f"mindprobe run failed: {' '.join(cmd)}")


async def bare_process(url: str, bodies_file: Path, concurrency: int,
                       env: dict[str, str]) -> None:
    """The bare loop as a program of its own (interpreter start, aiohttp import and reading the
    bodies included), for a like-for-like view of the whole-process number; the target uses
    `bare_loop` in this process."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(Path(__file__).with_name("bare_loop.py")), url, str(bodies_file),
        str(concurrency), env=env)
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
            tmp = Path(d)
            env = child_env(tmp / "mindprobe-cache")
            if a.whole_process:  # untimed: writes the bodies and warms the data memo
                first = tmp / "runs-first"
                asyncio.run(whole_process(mindprobe_run(
                    url, a.items, a.concurrency, first, a.data_dir, tmp / "cache-first.sqlite",
                    env), env))
                bodies = bodies_from_records(records_file(first))
            else:
                bodies = echo_bodies(a.items)
            bodies_file = tmp / "bodies.json"
            bodies_file.write_text(json.dumps(bodies))
            asyncio.run(bare_loop(url, bodies[:200], a.concurrency))  # warm-up
            rows, procs = [], []
            for r in range(a.repeat):  # interleave so both see the same machine load
                bw, bc = measure(bare_loop, url, bodies, a.concurrency)
                if a.whole_process:  # CPU: the child's (the test server's is not counted)
                    cmd = mindprobe_run(url, a.items, a.concurrency, tmp / f"runs-{r}",
                                        a.data_dir, tmp / f"cache-{r}.sqlite", env)
                    rw, rc = measure(whole_process, cmd, env)
                    if len(bodies_from_records(records_file(tmp / f"runs-{r}"))) != len(bodies):
                        raise SystemExit("a timed run sent another number of requests")
                    procs.append(measure(bare_process, url, bodies_file, a.concurrency,
                                         env)[0])
                else:
                    # on the loop `mindprobe run` uses (uvloop where installed)
                    rw, rc = measure(runner_loop, url, a.items, a.concurrency, tmp,
                                     run=run_async)
                rows.append((bw, bc, rw, rc))
                print(f"round {r + 1}: bare {bw:.2f} s wall {bc:.2f} s CPU, mindprobe "
                      f"{rw:.2f} s wall {rc:.2f} s CPU, ratio {bw / rw:.2f}, load "
                      f"{os.getloadavg()[0]:.1f}", flush=True)
        bw, bc, rw, rc = (min(r[i] for r in rows) for i in range(4))
        n = len(bodies)  # WorldSense --limit rounds up to whole tuples
        print(f"items={n} concurrency={a.concurrency} (best of {a.repeat}), load average "
              f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
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
