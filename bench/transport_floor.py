"""What the HTTP client alone costs a request: bare loops that send the same WorldSense request
bodies to the instant test server (a subprocess, its CPU not counted) through aiohttp (on
asyncio's loop and on uvloop, mindprobe's) and, where installed, through pyreqwest (a Rust
client whose connections run on its own threads), in interleaved rounds.

Why: the whole-process target (a `mindprobe run` at >= 0.65x a bare aiohttp loop's requests/s,
`bench/harness_overhead.py --whole-process`) leaves mindprobe, beside the aiohttp client it
shares with the loop, about 50 microseconds a request for everything else. This script measures
that floor: per request, the CPU of the loop's main thread (what competes with mindprobe's own
Python for the GIL), the whole process's CPU (threads included) and requests/s.

    python bench/transport_floor.py [--requests 10000] [--rounds 3] [--concurrency 32]
                                    [--data-dir ../shared/data/worldsense]
    pip install pyreqwest   # the third client, if you want its figures (not a dependency)

The request bodies are WorldSense's (`mindprobe run worldsense:test_set --limit N`, read back from
its records); children run without PYTHONDONTWRITEBYTECODE.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from mindprobe.core.files import write_file

REPO = Path(__file__).resolve().parents[1]
CLIENTS = ("aiohttp-asyncio", "aiohttp-uvloop", "pyreqwest-uvloop")

# Run as `python transport_floor.py --child CLIENT URL BODIES CONCURRENCY`: one bare loop,
# printing "wall process_cpu main_thread_cpu" in seconds.
CHILD = r'''
import asyncio, json, sys, time
client, url, bodies_file, concurrency = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
with open(bodies_file, "rb") as f:
    datas = [json.dumps(b).encode() for b in json.load(f)]
HEADERS = {"Content-Type": "application/json"}

async def drive(send):
    queue = list(range(len(datas)))
    async def worker():
        while queue:
            raw = await send(datas[queue.pop()])
            json.loads(raw)["choices"][0]["message"]["content"]
    t0, c0, m0 = time.perf_counter(), time.process_time(), time.thread_time()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - t0, time.process_time() - c0, time.thread_time() - m0

async def with_aiohttp():
    import aiohttp
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as s:
        async def send(d):
            async with s.post(url + "/chat/completions", data=d, headers=HEADERS) as r:
                return await r.read()
        return await drive(send)

async def with_pyreqwest():
    from pyreqwest.client import ClientBuilder
    async with ClientBuilder().build() as c:
        async def send(d):
            req = c.post(url + "/chat/completions").header("Content-Type", "application/json")
            return bytes(await (await req.body_bytes(d).build().send()).bytes())
        return await drive(send)

if client == "aiohttp-asyncio":
    got = asyncio.run(with_aiohttp())
else:
    import uvloop
    got = uvloop.run(with_pyreqwest() if client.startswith("pyreqwest") else with_aiohttp())
print(*got)
'''


def bodies(data_dir: str, n: int, tmp: Path, env: dict[str, str], url: str) -> tuple[Path, int]:
    """WorldSense's request bodies, as `mindprobe run` sends them (from its own records)."""
    runs = tmp / "runs"
    subprocess.run([sys.executable, "-m", "mindprobe.cli", "run", "worldsense:test_set",
                    "--model", f"openai:test-model@{url}", "--limit", str(n), "--reasks", "0",
                    "--runs-dir", str(runs), "--no-cache", "--data-dir", data_dir],
                   env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = []
    for line in next(runs.rglob("records.jsonl")).read_text().splitlines():
        req = json.loads(line)["request"]
        out.append({"model": "test-model", "messages": req["messages"], **req["params"]})
    return write_file(tmp / "bodies.json", json.dumps(out)), len(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--data-dir", default=str(REPO.parent / "shared" / "data" / "worldsense"))
    a = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    clients = [c for c in CLIENTS if not c.startswith("pyreqwest") or _has("pyreqwest")]
    srv = subprocess.Popen([sys.executable, "-m", "mindprobe.testing.server", "--port", "0"],
                           stdout=subprocess.PIPE, text=True, env=env)
    figures: dict[str, list[tuple[float, float, float]]] = {c: [] for c in clients}
    try:
        url = srv.stdout.readline().split()[1]  # type: ignore[union-attr]
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            env["MINDPROBE_CACHE_DIR"] = str(tmp / "cache")
            path, n = bodies(a.data_dir, a.requests, tmp, env, url)
            for r in range(a.rounds):
                for c in clients:
                    out = subprocess.run([sys.executable, "-c", CHILD, "--child", c, url,
                                          str(path), str(a.concurrency)], env=env, check=True,
                                         capture_output=True, text=True).stdout.split()
                    figures[c].append((float(out[0]), float(out[1]), float(out[2])))
                print(f"round {r + 1}: " + ", ".join(
                    f"{c} {figures[c][-1][0]:.2f} s" for c in clients), flush=True)
    finally:
        srv.terminate()
        srv.wait()
    print(f"{n} requests, concurrency {a.concurrency}, load average "
          f"{os.getloadavg()[0]:.1f}; median (min-max) of {a.rounds} rounds")
    for c in clients:
        w, cpu, main = (sorted(x[i] for x in figures[c]) for i in range(3))
        print(f"  {c:17s} {n / statistics.median(w):7.0f} req/s   process CPU "
              f"{1e6 * statistics.median(cpu) / n:4.0f} us/req ({1e6 * cpu[0] / n:.0f}-"
              f"{1e6 * cpu[-1] / n:.0f})   main thread {1e6 * statistics.median(main) / n:4.0f} "
              f"us/req ({1e6 * main[0] / n:.0f}-{1e6 * main[-1] / n:.0f})")
    if len(clients) < len(CLIENTS):
        print("  (pyreqwest not installed: `pip install pyreqwest` for its figures)")
    return 0


def _has(module: str) -> bool:
    import importlib.util
    return importlib.util.find_spec(module) is not None


if __name__ == "__main__":
    sys.exit(main())
