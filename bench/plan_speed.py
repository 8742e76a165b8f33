"""How long a profile's plan takes: `mindprobe profile --model random --size quick --dry-run`,
cold (fresh mindprobe caches: the data memos, SORT's Book-SORT build from the Gutenberg books)
and warm (the same caches again), in interleaved rounds (cold, warm, cold, warm…) so both see
the same machine load. Each is a process of its own. The target is its WALL time (what a user
waits); its CPU time (user + system, `wait4`: that child and the workers it waited for) is
printed beside it, the figure a loaded machine does not inflate much. Target: ≤ 5 s cold,
≤ 2 s warm.

The children run with their bytecode, as a user's installed package does: the
PYTHONDONTWRITEBYTECODE a shell (a coding tool's) may set is dropped from their environment,
and each source tree is compiled once before the rounds.

A dry run never builds Book-SORT (SORT's numbers are then estimated from the books);
`--prebuilt-sort`: every cold cache starts with the build a first run leaves (its rows in the
data memo, made once beforehand), so the plans are SORT's exact ones and cold is everything
else: the data memos (WorldSense's official file decoded), the upstream files read.

`--compare SRC`: the same command from another checkout's `src` folder (the code before a
change, say: `git archive HEAD~1 | tar -x -C /tmp/old`, then `--compare /tmp/old/src`), run in
the same rounds (this tree, the other, this, the other…), warm on a cache of its own.

    python bench/plan_speed.py [--data-dir ../shared/data] [--rounds 5] [--size quick]
                               [--prebuilt-sort] [--compare SRC] [--warm-only [--cache DIR]]
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


def child_env(cache: Path, src: Path | None = None) -> dict[str, str]:
    """The environment of one dry run: `cache` as every mindprobe cache, bytecode allowed,
    `src` (another checkout's) imported first where given."""
    env = {**os.environ, "MINDPROBE_CACHE_DIR": str(cache),
           "MINDPROBE_FANOUTQA_CACHE": str(cache / "fanoutqa")}
    for var in ("MINDPROBE_DATA_DIR", "MINDPROBE_RESPONSE_CACHE", "PYTHONDONTWRITEBYTECODE"):
        env.pop(var, None)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    return env


def dry_run(data_dir: Path, size: str, cache: Path, runs: Path,
            src: Path | None = None) -> tuple[float, float]:
    """(wall s, CPU s) of one dry run with `cache` as every mindprobe cache."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "mindprobe.cli", "profile", "--model",
                             "random", "--size", size, "--dry-run", "--data-dir",
                             str(data_dir), "--runs-dir", str(runs)], env=child_env(cache, src),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"the dry run failed ({os.waitstatus_to_exitcode(status)})")
    return wall, usage.ru_utime + usage.ru_stime


def compile_tree(src: Path | None) -> None:
    """Bytecode for every module, as an installed package has (the first round would
    otherwise compile them)."""
    if src is None:
        import mindprobe

        src = Path(mindprobe.__file__).parent.parent
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(src / "mindprobe")],
                   env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
                   check=True,
                   stdout=subprocess.DEVNULL)


def _line(name: str, xs: list[tuple[float, float]], target: float) -> str:
    cpu, wall = [c for _, c in xs], [w for w, _ in xs]
    return (f"{name}: WALL median {statistics.median(wall):.2f} s (min {min(wall):.2f}, max "
            f"{max(wall):.2f}; target <= {target:g} s); CPU median "
            f"{statistics.median(cpu):.2f} s (min {min(cpu):.2f}, max {max(cpu):.2f})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--size", default="quick")
    parser.add_argument("--prebuilt-sort", action="store_true",
                        help="start every cold cache with SORT's Book-SORT build")
    parser.add_argument("--compare", type=Path, metavar="SRC",
                        help="another checkout's src folder, run in the same rounds")
    parser.add_argument("--warm-only", action="store_true",
                        help="warm rounds only (one cold plan first fills the cache)")
    parser.add_argument("--cache", type=Path, metavar="DIR",
                        help="with --warm-only: start from a copy (hard links) of DIR, a "
                        "cache a dry run filled, instead of filling one")
    args = parser.parse_args()
    if args.cache and (not args.warm_only or args.prebuilt_sort):
        parser.error("--cache goes with --warm-only (and holds its own Book-SORT build)")
    trees: list[tuple[str, Path | None]] = [("this tree", None)]
    if args.compare:
        trees.append((str(args.compare), args.compare.resolve()))
    for _, src in trees:
        compile_tree(src)
    cold: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in trees}
    warm: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in trees}
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        built = Path(tmp) / "built"
        if args.prebuilt_sort:
            subprocess.run([sys.executable, "-c", _PREBUILD, str(args.data_dir / "sort")],
                           env={**child_env(built), "PYTHONPATH": str(trees[0][1] or "")},
                           check=True)
        for r in range(args.rounds):
            for i, (name, src) in enumerate(trees):
                cache = Path(tmp) / f"cache-{i}-{0 if args.warm_only else r}"
                runs = Path(tmp) / f"runs-{i}-{r}"
                if not cache.exists() and args.prebuilt_sort:
                    shutil.copytree(built / "decoded", cache / "decoded")
                if args.warm_only and r == 0:
                    if args.cache:  # the memos; those keyed by the cache's path are made again
                        shutil.copytree(args.cache, cache, copy_function=os.link)
                    dry_run(args.data_dir, args.size, cache, runs, src)  # fills the cache
                elif not args.warm_only:
                    cold[name].append(dry_run(args.data_dir, args.size, cache, runs, src))
                warm[name].append(dry_run(args.data_dir, args.size, cache, runs, src))
                loads.append(os.getloadavg()[0])
                print(f"round {r + 1}, {name}: "
                      + (f"cold {cold[name][-1][0]:.2f} s wall ({cold[name][-1][1]:.2f} s "
                         "CPU), " if cold[name] else "")
                      + f"warm {warm[name][-1][0]:.2f} s wall ({warm[name][-1][1]:.2f} s CPU)",
                      flush=True)
    print(f"machine: {os.cpu_count()} CPUs, load average {min(loads):.1f}-{max(loads):.1f} "
          "during the rounds" + ("; cold caches start with the Book-SORT build"
                                 if args.prebuilt_sort else ""))
    for name, _ in trees:
        print(f"[{name}]")
        if cold[name]:
            print("  " + _line("cold", cold[name], 5))
        print("  " + _line("warm", warm[name], 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
