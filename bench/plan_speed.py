"""How long a profile's plan takes: `mindprobe profile --model random --size quick --dry-run`,
cold (fresh mindprobe caches: the data memos, SORT's Book-SORT build from the Gutenberg books)
and warm (the same caches again), in interleaved rounds (cold, warm, cold, warm…) so both see
the same machine load. Each is a process of its own; its CPU time (user + system, `wait4`: that
child and the workers it waited for) is the figure a loaded machine does not inflate much, its
wall time is printed beside it. Target: ≤ 5 s cold, ≤ 2 s warm.

A dry run never builds Book-SORT (SORT's numbers are then estimated from the books);
`--prebuilt-sort`: every cold cache starts with the build a first run leaves (its rows in the
data memo, made once beforehand), so the plans are SORT's exact ones and cold is everything
else: the data memos (WorldSense's official file decoded), the upstream files read.

    python bench/plan_speed.py [--data-dir ../shared/data] [--rounds 5] [--size quick]
                               [--prebuilt-sort]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


#: What a first run does before its plan: SORT's whole grid built into the data memo.
_PREBUILD = ("import sys; from pathlib import Path; from mindprobe.benchmarks.sort import sources; "
             "from mindprobe.benchmarks.sort.cell import CONDITIONS; root = Path(sys.argv[1]); "
             "sources.built_rows(root, list(CONDITIONS), sources.load_source_books(root, None))")


def dry_run(data_dir: Path, size: str, cache: Path, runs: Path) -> tuple[float, float]:
    """(wall s, CPU s) of one dry run with `cache` as every mindprobe cache."""
    env = {**os.environ, "MINDPROBE_CACHE_DIR": str(cache),
           "MINDPROBE_FANOUTQA_CACHE": str(cache / "fanoutqa")}
    for var in ("MINDPROBE_DATA_DIR", "MINDPROBE_RESPONSE_CACHE"):
        env.pop(var, None)
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "mindprobe.cli", "profile", "--model",
                             "random", "--size", size, "--dry-run", "--data-dir",
                             str(data_dir), "--runs-dir", str(runs)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"the dry run failed ({os.waitstatus_to_exitcode(status)})")
    return wall, usage.ru_utime + usage.ru_stime


def _line(name: str, xs: list[tuple[float, float]]) -> str:
    cpu, wall = [c for _, c in xs], [w for w, _ in xs]
    return (f"{name}: CPU median {statistics.median(cpu):.2f} s (min {min(cpu):.2f}, max "
            f"{max(cpu):.2f}); wall median {statistics.median(wall):.2f} s (min "
            f"{min(wall):.2f}, max {max(wall):.2f})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--size", default="quick")
    parser.add_argument("--prebuilt-sort", action="store_true",
                        help="start every cold cache with SORT's Book-SORT build")
    args = parser.parse_args()
    cold, warm = [], []
    with tempfile.TemporaryDirectory() as tmp:
        built = Path(tmp) / "built"
        if args.prebuilt_sort:
            subprocess.run([sys.executable, "-c", _PREBUILD, str(args.data_dir / "sort")],
                           env={**os.environ, "MINDPROBE_CACHE_DIR": str(built)}, check=True)
        for r in range(args.rounds):
            cache = Path(tmp) / f"cache-{r}"
            runs = Path(tmp) / f"runs-{r}"
            if args.prebuilt_sort:
                shutil.copytree(built / "decoded", cache / "decoded")
            cold.append(dry_run(args.data_dir, args.size, cache, runs))
            warm.append(dry_run(args.data_dir, args.size, cache, runs))
            print(f"round {r + 1}: cold {cold[-1][1]:.2f} s CPU ({cold[-1][0]:.1f} s wall), "
                  f"warm {warm[-1][1]:.2f} s CPU ({warm[-1][0]:.1f} s wall)", flush=True)
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
          + ("; cold caches start with the Book-SORT build" if args.prebuilt_sort else ""))
    print(_line("cold", cold) + "   (target <= 5 s)")
    print(_line("warm", warm) + "   (target <= 2 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
