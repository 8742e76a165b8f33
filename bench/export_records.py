"""Export speed on a full-size WorldSense run (87,048 records): `mindprobe export --format
inspect`, `--format parquet` and `--format hf`, each timed as a whole process (wall, and the
child's CPU), with its peak memory; and the time to load the records back from JSON Lines
against Parquet (what a pandas user pays).

The big run is synthesised: a real run on `random` (`--seed-items` trials, default 2,000:
real prompts, requests, replies and scores), replicated with fresh ids and tuple ids until it
holds `--records` records (default 87,048, the whole test set), the manifest saying so. No
server is needed. `--sizes` times inspect at several sizes too (linear: the time per record
stays flat); `--repeat` times it in interleaved rounds, `--baseline` another mindprobe's
`src` in the same rounds (old, new, old, new). Each command runs the mindprobe of this
checkout's `src` (or the baseline's), with bytecode as an installed package has it: the
children's environment drops PYTHONDONTWRITEBYTECODE.

    python bench/export_records.py [--data-dir ../shared/data/worldsense] [--records 87048]
                                   [--sizes 20000] [--keep DIR] [--repeat 3]
                                   [--baseline OLD/src] [--inspect-only]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "worldsense"


SRC = Path(__file__).resolve().parents[1] / "src"


def _env(src: Path) -> dict[str, str]:
    """The child's environment: `src`'s mindprobe first on the path, and bytecode written and
    read as a user's installed package has it (a shell with PYTHONDONTWRITEBYTECODE set
    would recompile every module in every child, ~0.4 s each)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join([str(src), *filter(None, [env.get("PYTHONPATH")])])
    return env


def _timed(args: list[str], src: Path = SRC) -> tuple[float, float, float]:
    """(wall s, CPU s, peak MB) of one `mindprobe` command (the mindprobe in `src`) as a
    process of its own (`wait4`: that child's own usage)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "mindprobe.cli", *args], env=_env(src),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"mindprobe {' '.join(args)} failed ({proc.returncode}):\n{err}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024  # Linux: KB


def _spread(values: list[float], fmt: str = ".1f") -> str:
    """The median, with min and max when there are several."""
    mid = statistics.median(values)
    if len(values) == 1:
        return f"{mid:{fmt}}"
    return f"{mid:{fmt}} (min {min(values):{fmt}}, max {max(values):{fmt}})"


def time_inspect(runs: dict[int, Path], trees: dict[str, Path], rounds: int, out: Path
                 ) -> None:
    """`export --format inspect` of every run by every tree, in `rounds` interleaved rounds
    (each round: every size, each tree in turn), then the medians with min and max."""
    got: dict[tuple[str, int], list[tuple[float, float, float]]] = {}
    loads = []
    for r in range(rounds):
        for n, run_dir in sorted(runs.items()):
            for name, src in trees.items():
                loads.append(os.getloadavg()[0])
                t = _timed(["export", "--format", "inspect", "--run", str(run_dir), "--out",
                            str(out / f"run-{n}-{name}.eval"), "--force"], src)
                got.setdefault((name, n), []).append(t)
                print(f"  round {r + 1}, {name}, {n:,} records: {t[0]:.1f} s wall, "
                      f"{t[1]:.1f} s CPU, peak {t[2]:.0f} MB", flush=True)
    print(f"load average during the rounds: {min(loads):.1f} to {max(loads):.1f}")
    for (name, n), ts in sorted(got.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        walls, cpus, peaks = ([t[i] for t in ts] for i in range(3))
        print(f"export --format inspect, {n:,} records, {name}: wall {_spread(walls)} s, "
              f"CPU {_spread(cpus)} s ({1000 * statistics.median(cpus) / n:.2f} ms a "
              f"record), peak {_spread(peaks, '.0f')} MB, {len(ts)} round(s)")


def seed_run(root: Path, data_dir: Path, items: int) -> Path:
    """A real WorldSense run on `random` of about `items` trials."""
    runs = root / "seed-runs"
    subprocess.run([sys.executable, "-m", "mindprobe.cli", "run", "worldsense", "--model",
                    "random", "--limit", str(items), "--data-dir", str(data_dir),
                    "--runs-dir", str(runs), "--no-cache"], check=True, env=_env(SRC),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return next(runs.glob("worldsense/*/*"))


def synthesise(seed: Path, out: Path, n: int) -> Path:
    """`seed`'s records replicated to `n` (copy k: new trial keys and ids, tuple ids suffixed
    `#k`, so every record is its own item and every copy its own tuples), in a run folder of
    its own."""
    lines = (seed / "records.jsonl").read_bytes().splitlines()
    out.mkdir(parents=True)
    with open(out / "records.jsonl", "wb") as f:
        for i in range(n):
            k, rec = divmod(i, len(lines))
            r = json.loads(lines[rec])
            if k:  # a 64-bit trial key with bits 56-62 flipped: unique, still an int64
                r["Key"] = r["Key"] ^ (k << 56)
                r["id"] = str(r["Key"])
                r["tuple_ID"] = f"{r['tuple_ID']}#{k}"
            f.write(json.dumps(r, ensure_ascii=False).encode() + b"\n")
    manifest = json.loads((seed / "manifest.json").read_text())
    manifest["n_items"] = n
    (out / "manifest.json").write_text(json.dumps(manifest))
    for extra in ("texts.jsonl",):
        if (seed / extra).is_file():
            (out / extra).write_bytes((seed / extra).read_bytes())
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--records", type=int, default=87_048)
    parser.add_argument("--seed-items", type=int, default=2000)
    parser.add_argument("--sizes", default="",
                        help="comma-separated record counts to time inspect at as well")
    parser.add_argument("--keep", type=Path, help="a folder to keep the runs and exports in; "
                        "a later call with the same --keep reuses its runs")
    parser.add_argument("--repeat", type=int, default=1,
                        help="interleaved rounds of the inspect export (medians, min, max)")
    parser.add_argument("--baseline", type=Path, help="the src folder of another mindprobe "
                        "(e.g. an older commit's, from git archive) timed in the same rounds")
    parser.add_argument("--inspect-only", action="store_true",
                        help="skip parquet, hf and the pandas load")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        sizes = sorted({int(s) for s in args.sizes.split(",") if s} | {args.records})
        runs = {n: root / f"run-{n}" for n in sizes}
        if not all((d / "records.jsonl").is_file() for d in runs.values()):
            seed = (next((root / "seed-runs").glob("worldsense/*/*"), None)
                    or seed_run(root, args.data_dir, args.seed_items))
            for n, run_dir in runs.items():
                if not (run_dir / "records.jsonl").is_file():
                    synthesise(seed, run_dir, n)
        print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
        trees = {"this tree": SRC}
        if args.baseline:
            trees = {"baseline": args.baseline.resolve(), **trees}
        time_inspect(runs, trees, args.repeat, root)
        if args.inspect_only:
            return 0
        run_dir = runs[args.records]
        for fmt, out in (("parquet", root / "run.parquet"), ("hf", root / "hf")):
            wall, cpu, rss = _timed(["export", "--format", fmt, "--run", str(run_dir),
                                     "--out", str(out), "--force"])
            print(f"export --format {fmt}, {args.records:,} records: {wall:.1f} s wall, "
                  f"{cpu:.1f} s CPU, peak {rss:.0f} MB")
        import pandas as pd

        t0 = time.perf_counter()
        pd.read_json(run_dir / "records.jsonl", lines=True)
        t_json = time.perf_counter() - t0
        t0 = time.perf_counter()
        pd.read_parquet(root / "run.parquet")
        t_read = time.perf_counter() - t0
        print(f"pandas load: JSON Lines {t_json:.2f} s, Parquet {t_read:.2f} s "
              f"({t_json / t_read:.1f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
