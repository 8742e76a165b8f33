"""The bare asyncio + aiohttp loop that bench/harness_overhead.py compares mindprobe with: the
same request bodies, the same concurrency, nothing else (no records, no cache, no retries).

Its own module so that, run as a program, it imports nothing but aiohttp:

    python bench/bare_loop.py URL BODIES.json CONCURRENCY
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import aiohttp


async def bare_loop(url: str, bodies: list[dict[str, Any]], concurrency: int) -> None:
    queue = list(range(len(bodies)))
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as s:
        async def worker() -> None:
            while queue:
                body = bodies[queue.pop()]
                async with s.post(url + "/chat/completions", data=json.dumps(body).encode(),
                                  headers={"Content-Type": "application/json"}) as r:
                    json.loads(await r.read())["choices"][0]["message"]["content"]
        await asyncio.gather(*(worker() for _ in range(concurrency)))


if __name__ == "__main__":
    with open(sys.argv[2]) as f:
        asyncio.run(bare_loop(sys.argv[1], json.load(f), int(sys.argv[3])))
