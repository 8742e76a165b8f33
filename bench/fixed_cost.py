"""A run's fixed cost: whole `mindprobe run worldsense:test_set --limit 20 --reasks 0`
processes against the instant test server (`python -m mindprobe.testing.server --port 0`, a
process of its own, so its CPU is not counted), wall time and the child's CPU time (user +
system, `os.wait4`), median, min and max of interleaved rounds. Target (design.md §7): ≤ 1 s.

Each timed run has a fresh response cache (every request a miss, and written) and a fresh runs
folder; the data memo is warm (a cache folder of the bench's own, filled by one untimed run of
each tree first, so the user's is neither read nor touched). The children run without
PYTHONDONTWRITEBYTECODE (a development shell may set it): an installed package has its
bytecode, and recompiling every module at each start is not what a user's run pays.

In the same rounds, `--big N` (default 20000; 0 to skip) times `--limit N` too: its time less
the small run's is the per-request part, printed per request. `--src DIR` (repeatable) times
another source tree in the same rounds (the code before, say: `git archive HEAD~1 | tar -x -C
/tmp/old`, then `--src /tmp/old/src`). A breakdown per tree, from one more small run under
`python -X importtime` (untimed): the imports' total and the heaviest top-level packages, and
whether pandas was imported.

    python bench/fixed_cost.py [--data-dir ../shared/data/worldsense] [--rounds 5]
                               [--limit 20] [--big 20000] [--src DIR ...]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "worldsense"


def child_env(src: Path, cache_dir: Path) -> dict[str, str]:
    """A timed child's environment: this tree's code, the bench's own cache folder, bytecode
    allowed (as in a user's install)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONDONTWRITEBYTECODE", "MINDPROBE_DATA_DIR",
                        "MINDPROBE_RESPONSE_CACHE")}
    env.update(PYTHONPATH=str(src), MINDPROBE_CACHE_DIR=str(cache_dir))
    return env


def command(url: str, limit: int, data_dir: Path, scratch: Path,
            python: tuple[str, ...] = ()) -> list[str]:
    """`mindprobe run worldsense:test_set` with a fresh runs folder and response cache."""
    stamp = time.monotonic_ns()
    return [sys.executable, *python, "-m", "mindprobe.cli", "run", "worldsense:test_set",
            "--model", f"openai:test-model@{url}", "--limit", str(limit), "--reasks", "0",
            "--concurrency", "32", "--cache", str(scratch / f"cache-{stamp}.sqlite"),
            "--runs-dir", str(scratch / f"runs-{stamp}"), "--data-dir", str(data_dir)]


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall s, CPU s) of one whole child process; its CPU from os.wait4's rusage."""
    start = time.perf_counter()
    with subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE) as child:
        stderr = child.stderr.read() if child.stderr else b""
        usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(usage[1])
    if child.returncode not in (0, 1):  # 1: the run's own verdict (invalid answers)
        raise SystemExit(f"the run failed ({child.returncode}): {' '.join(cmd)}\n"
                         f"{stderr.decode()[-2000:]}")
    return time.perf_counter() - start, usage[2].ru_utime + usage[2].ru_stime


def import_breakdown(cmd: list[str], env: dict[str, str]) -> str:
    """The imports of one run (`-X importtime`): their total, the heaviest top-level packages
    by cumulative time, and whether pandas was among them."""
    out = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True, check=False)
    total, top = 0, {}
    for line in out.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if not m:
            continue
        total += int(m.group(1))
        if len(m.group(3)) == 1:  # imported by the program itself, not by another module
            name = m.group(4)
            top[name] = top.get(name, 0) + int(m.group(2))
    heavy = sorted(top.items(), key=lambda kv: -kv[1])[:8]
    pandas = any(re.search(r"\|\s*pandas$", line) for line in out.stderr.splitlines())
    return (f"imports {total / 1e6:.2f} s (under -X importtime, which inflates them); "
            f"pandas imported: {pandas}; heaviest: "
            + ", ".join(f"{n} {us / 1e6:.2f}" for n, us in heavy))


def stats(values: list[float]) -> str:
    return (f"median {statistics.median(values):.2f} s (min {min(values):.2f}, "
            f"max {max(values):.2f})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA,
                        help="WorldSense's data folder (default: ../shared/data/worldsense)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--limit", type=int, default=20, help="the small run's --limit")
    parser.add_argument("--big", type=int, default=20000,
                        help="the large run's --limit, for the per-request part (0: skip)")
    parser.add_argument("--src", type=Path, action="append", default=[],
                        help="another source tree to time in the same rounds")
    args = parser.parse_args()
    if args.rounds < 1 or args.limit < 1 or args.big < 0:
        parser.error("--rounds and --limit must be at least 1, --big at least 0")
    trees = [REPO / "src", *(p.resolve() for p in args.src)]
    data_dir = args.data_dir.resolve()
    server = subprocess.Popen([sys.executable, "-m", "mindprobe.testing.server", "--port", "0"],
                              stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    try:
        assert server.stdout is not None
        ready = server.stdout.readline().split()
        if ready[:1] != ["READY"]:
            raise SystemExit("the test server did not start")
        url = ready[1]
        with tempfile.TemporaryDirectory() as name:
            scratch = Path(name)
            envs = [child_env(src, scratch / f"memo-{t}") for t, src in enumerate(trees)]
            breakdown = []
            for env in envs:  # untimed: each tree's data memo warmed, then its imports
                timed(command(url, args.limit, data_dir, scratch), env)
                breakdown.append(import_breakdown(
                    command(url, args.limit, data_dir, scratch, ("-X", "importtime")), env))
            sizes = [args.limit] + ([args.big] if args.big else [])
            figures: dict[tuple[int, int], list[tuple[float, float]]] = {}
            loads = [os.getloadavg()[0]]
            for r in range(args.rounds):
                for t, src in enumerate(trees):  # interleaved: every tree at the same load
                    for size in sizes:
                        fig = timed(command(url, size, data_dir, scratch), envs[t])
                        figures.setdefault((t, size), []).append(fig)
                        print(f"round {r + 1} {src} --limit {size}: {fig[0]:.2f} s wall, "
                              f"{fig[1]:.2f} s CPU", flush=True)
                loads.append(os.getloadavg()[0])
    finally:
        server.terminate()
        server.wait()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"\nmachine: {cores} CPUs, load average {min(loads):.1f}–{max(loads):.1f} over the "
          f"rounds; {args.rounds} rounds")
    for t, src in enumerate(trees):
        small = figures[(t, args.limit)]
        print(f"{src}\n  --limit {args.limit} (the fixed cost): wall "
              f"{stats([w for w, _ in small])}; CPU {stats([c for _, c in small])}")
        if args.big:
            big = figures[(t, args.big)]
            n = args.big - args.limit
            walls = [w for w, _ in big]
            cpus = [c for _, c in big]
            per_wall = (statistics.median(walls) - statistics.median(w for w, _ in small)) / n
            per_cpu = (statistics.median(cpus) - statistics.median(c for _, c in small)) / n
            print(f"  --limit {args.big}: wall {stats(walls)}; CPU {stats(cpus)}\n"
                  f"  per request (medians, --limit {args.big} less --limit {args.limit}): "
                  f"{1000 * per_wall:.3f} ms wall, {1000 * per_cpu:.3f} ms CPU")
        print(f"  {breakdown[t]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
