"""A first run's time to its first request against a later run's: `mindprobe run worldsense
--model openai:m@http://127.0.0.1:PORT/v1 --limit 20000 --reasks 0 --concurrency 32 --data-dir
DIR` against an instant server (this script's, in a thread), from process start to the server's
first completion request, with a fresh MINDPROBE_CACHE_DIR (cold: WorldSense's official file
decoded and its memo written) and with one a previous run filled (warm), in interleaved rounds
(cold, warm, cold, warm…) so both see the same machine load. Target: cold ≤ 1.5 × warm.

Beside the wall time, the child's CPU time (user + system, from /proc) at the moment of the
first request, all its threads and its main thread alone: the figures a loaded machine
inflates least. The main thread's share is serial (it holds the GIL); the rest ran on other
cores (bzip2 blocks decoded in threads), so on an idle machine of N cores the wall time
cannot be under max(main, all / N), printed as the "idle bound". The child is stopped at its first request (the rest of the run is not this figure);
`--whole` lets it finish. Each child runs without PYTHONDONTWRITEBYTECODE (a user's installed
package has its bytecode; a development shell may set it) and with a fresh response cache.

`--src DIR` (repeatable) times another source tree too (a checkout of the code before, say:
`git archive HEAD~1 | tar -x -C /tmp/old`, then `--src /tmp/old/src`), in the same rounds.

    python bench/first_run.py [--data-dir ../shared/data] [--rounds 5] [--limit 20000]
                              [--src DIR ...] [--whole]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from aiohttp import web

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data"
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class FirstRequest:
    """An instant OpenAI-compatible server that notes when (and at what child CPU time) the
    first completion request of each run arrives."""

    def __init__(self) -> None:
        self.pid = 0
        self.at: float | None = None
        self.cpu: tuple[float, float] | None = None
        self.arrived = threading.Event()
        self.port = 0

    def watch(self, pid: int) -> None:
        self.pid, self.at, self.cpu = pid, None, None
        self.arrived.clear()

    def _first(self) -> None:
        if self.at is None:
            self.at = time.perf_counter()
            self.cpu = _cpu_of(self.pid)
            self.arrived.set()

    async def _models(self, _req: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [
            {"id": "m", "object": "model", "owned_by": "bench"}]})

    async def _chat(self, req: web.Request) -> web.Response:
        self._first()
        await req.read()
        return web.json_response({
            "id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "1"},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}})

    async def _completion(self, req: web.Request) -> web.Response:
        self._first()
        await req.read()
        return web.json_response({
            "id": "x", "object": "text_completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "text": "1", "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}})

    def start(self) -> None:
        ready = threading.Event()

        async def serve() -> None:
            app = web.Application()
            app.router.add_get("/v1/models", self._models)
            app.router.add_post("/v1/chat/completions", self._chat)
            app.router.add_post("/v1/completions", self._completion)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            ready.set()
            await asyncio.Event().wait()

        threading.Thread(target=asyncio.run, args=(serve(),), daemon=True).start()
        ready.wait()


def _cpu_of(pid: int) -> tuple[float, float] | None:
    """User + system CPU seconds of a live process: all its threads (ended ones included),
    and its main thread (Linux /proc)."""
    try:
        return _ticks(f"/proc/{pid}/stat"), _ticks(f"/proc/{pid}/task/{pid}/stat")
    except OSError:
        return None


def _ticks(stat: str) -> float:
    fields = Path(stat).read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def one_run(server: FirstRequest, src: Path, data_dir: Path, cache: Path, tmp: Path,
            limit: int, whole: bool) -> tuple[float, tuple[float, float] | None]:
    """(wall s, (CPU s, main thread's CPU s)) from the child's start to its first request."""
    env = {**os.environ, "MINDPROBE_CACHE_DIR": str(cache), "PYTHONPATH": str(src),
           "MINDPROBE_RESPONSE_CACHE": str(tmp / f"responses-{time.monotonic_ns()}")}
    for var in ("PYTHONDONTWRITEBYTECODE", "MINDPROBE_DATA_DIR"):
        env.pop(var, None)
    cmd = [sys.executable, "-m", "mindprobe.cli", "run", "worldsense", "--model",
           f"openai:m@http://127.0.0.1:{server.port}/v1", "--limit", str(limit), "--reasks", "0",
           "--concurrency", "32", "--data-dir", str(data_dir),
           "--runs-dir", str(tmp / f"runs-{time.monotonic_ns()}")]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    server.watch(proc.pid)
    while not server.arrived.wait(0.05):
        if proc.poll() is not None:
            raise SystemExit(f"the run ended before any request ({proc.returncode}): "
                             f"{proc.stderr.read().decode()[-2000:] if proc.stderr else ''}")
    if not whole:
        proc.send_signal(signal.SIGTERM)
    proc.communicate()
    assert server.at is not None
    return server.at - t0, server.cpu


def _line(name: str, xs: list[tuple[float, tuple[float, float] | None]], cores: int) -> str:
    def stats(values: list[float]) -> str:
        return (f"median {statistics.median(values):.2f} s (min {min(values):.2f}, "
                f"max {max(values):.2f})")

    text = f"{name}: wall {stats([w for w, _ in xs])}"
    cpu = [c for _, c in xs if c is not None]
    if cpu:
        text += (f"; CPU {stats([a for a, _ in cpu])}; main thread {stats([m for _, m in cpu])}"
                 f"; idle bound on {cores} cores {stats([max(m, a / cores) for a, m in cpu])}")
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--limit", type=int, default=20000)
    parser.add_argument("--src", type=Path, action="append", default=[],
                        help="another source tree to time in the same rounds")
    parser.add_argument("--whole", action="store_true", help="let each run finish")
    args = parser.parse_args()
    trees = [REPO / "src", *(p.resolve() for p in args.src)]
    server = FirstRequest()
    server.start()
    figures: dict[tuple[int, str], list[tuple[float, float | None]]] = {}
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        warm_caches = []
        for t, src in enumerate(trees):  # each tree's warm cache, filled by a whole run
            warm_caches.append(tmp / f"warm-{t}")
            one_run(server, src, args.data_dir, warm_caches[-1], tmp, args.limit, True)
        for r in range(args.rounds):
            for t, src in enumerate(trees):
                cold = tmp / f"cold-{r}-{t}"
                got = {"cold": one_run(server, src, args.data_dir, cold, tmp, args.limit,
                                       args.whole),
                       "warm": one_run(server, src, args.data_dir, warm_caches[t], tmp,
                                       args.limit, args.whole)}
                shutil.rmtree(cold, ignore_errors=True)
                for kind, fig in got.items():
                    figures.setdefault((t, kind), []).append(fig)
                print(f"round {r + 1} {src}: " + ", ".join(
                    f"{k} {w:.2f} s wall ({c and round(c[0], 2)} s CPU, main thread "
                    f"{c and round(c[1], 2)})" for k, (w, c) in got.items()), flush=True)
            loads.append(os.getloadavg()[0])
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"machine: {cores} CPUs, load average {min(loads):.1f}–{max(loads):.1f} "
          f"over the rounds; --limit {args.limit}")
    for t, src in enumerate(trees):
        cold, warm = figures[(t, "cold")], figures[(t, "warm")]
        ratio = statistics.median(c[0] for c in cold) / statistics.median(w[0] for w in warm)
        print(f"{src}\n  " + _line("cold", cold, cores or 1) + "\n  "
              + _line("warm", warm, cores or 1)
              + f"\n  cold / warm (wall medians): {ratio:.2f}   (target <= 1.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
