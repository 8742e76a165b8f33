"""SORT's share of a plan, before and after: what a quick profile plans for SORT (`mindprobe run
sort --model random --dry-run --excerpts 1`) with fresh caches (cold: Book-SORT not built) and
again (warm), and a first real run (`--limit 1`, fresh caches: Book-SORT built from the
Gutenberg books, its rows memoised, one item asked of the random model).

Each measure is a process of its own; its CPU time (user + system of it and of the workers it
waited for, `wait4`) is the figure a loaded machine does not inflate much, its wall time is
printed beside it. Rounds interleave the measures and the source trees (`--src`, e.g. an older
commit's `src` unpacked with `git archive`), so all see the same load. Every tree is compiled
first and PYTHONDONTWRITEBYTECODE is dropped from the children's environment: a user's
installed package has its bytecode.

    python bench/sort_plan.py [--data-dir ../shared/data/sort] [--rounds 3]
                              [--src OLD/src --src NEW/src] [--skip-first-run]
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
DEFAULT_DATA = HERE.parent / "shared" / "data" / "sort"


def measure(src: Path, data: Path, cache: Path, runs: Path, dry: bool) -> tuple[float, float]:
    """(wall s, CPU s) of one SORT plan (`dry`) or first run, with `cache` as every cache."""
    env = {**os.environ, "MINDPROBE_CACHE_DIR": str(cache), "PYTHONPATH": str(src)}
    for var in ("MINDPROBE_DATA_DIR", "MINDPROBE_RESPONSE_CACHE", "PYTHONDONTWRITEBYTECODE"):
        env.pop(var, None)
    cmd = [sys.executable, "-m", "mindprobe.cli", "run", "sort", "--model", "random",
           "--excerpts", "1", "--data-dir", str(data), "--runs-dir", str(runs)]
    cmd += ["--dry-run"] if dry else ["--limit", "1"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{err.decode()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def _line(name: str, xs: list[tuple[float, float]]) -> str:
    cpu, wall = [c for _, c in xs], [w for w, _ in xs]
    return (f"{name}: CPU median {statistics.median(cpu):.2f} s (min {min(cpu):.2f}, max "
            f"{max(cpu):.2f}); wall median {statistics.median(wall):.2f} s (min "
            f"{min(wall):.2f}, max {max(wall):.2f})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--src", type=Path, action="append",
                        help="a source tree to measure (repeat; default: this checkout's src)")
    parser.add_argument("--skip-first-run", action="store_true",
                        help="measure the dry runs only")
    args = parser.parse_args()
    trees = [p.resolve() for p in args.src or [HERE / "src"]]
    for tree in trees:
        compileall.compile_dir(str(tree), quiet=1)
    kinds = ["cold", "warm"] + ([] if args.skip_first_run else ["first run"])
    got: dict[tuple[Path, str], list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for i, tree in enumerate(trees):
                base = Path(tmp) / f"{r}-{i}"
                base.mkdir()
                for kind in kinds:
                    cache = base / ("first" if kind == "first run" else "dry")
                    x = measure(tree, args.data_dir, cache, base / "runs", kind != "first run")
                    got.setdefault((tree, kind), []).append(x)
                    print(f"round {r + 1} {tree}: {kind} {x[1]:.2f} s CPU ({x[0]:.1f} s wall)",
                          flush=True)
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    for tree in trees:
        print(tree)
        for kind in kinds:
            print("  " + _line(kind, got[(tree, kind)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
