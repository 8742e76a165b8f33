"""Embedded engine speed by thread count and batch size (the defaults of `--threads` and
`--batch-size` are chosen from this on the machine at hand).

Each setting starts its own server and runs the same requests: a ~400-token prompt prefilled
from scratch (a new prompt each time, so nothing is cached) and 32 generated tokens; prints
prefill and generation tokens per second (median of --reps) and the machine's load average,
since on a shared machine the other processes decide as much as the setting.

    python bench/engine_threads.py [--threads 1,2] [--batch 512] [--reps 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics

from mindprobe.models.base import CallContext, Request
from mindprobe.models.local import LocalModel

TEXT = ("The quick brown fox jumps over the lazy dog while the committee reviews the annual "
        "budget, the weather turns and the river floods the lower fields again. ") * 12


async def measure(threads: int, batch: int, reps: int) -> tuple[float, float]:
    model = LocalModel(None, spec="local", threads=threads, batch=batch)
    model.configure(1)
    await model.start()
    pre, gen = [], []
    try:
        for i in range(reps + 1):
            req = Request(prompt=f"{i} {TEXT}", max_tokens=32, temperature=0.0,
                          extra={"ignore_eos": True})
            comp = await model.complete(req, CallContext("t", i, 0))
            t = (comp.raw or {}).get("timings") or {}
            if i:  # the first request warms the engine up
                pre.append(t.get("prompt_per_second", 0.0))
                gen.append(t.get("predicted_per_second", 0.0))
    finally:
        await model.close()
    return statistics.median(pre), statistics.median(gen)


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--batch", default="512")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    print(f"{'threads':>7} {'batch':>6} {'prefill tok/s':>13} {'gen tok/s':>9} {'load':>5}")
    for b in (int(x) for x in a.batch.split(",")):
        for n in (int(x) for x in a.threads.split(",")):
            p, g = await measure(n, b, a.reps)
            print(f"{n:7} {b:6} {p:13.1f} {g:9.1f} {os.getloadavg()[0]:5.1f}", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
