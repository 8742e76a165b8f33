"""Export speed on a full-size WorldSense run (87,048 records): `mindprobe export --format
inspect`, `--format parquet` and `--format hf`, each timed as a whole process (wall, and the
child's CPU), with its peak memory; and the time to load the records back from JSON Lines
against Parquet (what a pandas user pays).

The big run is synthesised: a real run on `random` (`--seed-items` trials, default 2,000:
real prompts, requests, replies and scores), replicated with fresh ids and tuple ids until it
holds `--records` records (default 87,048, the whole test set), the manifest saying so. No
server is needed. `--sizes` times inspect at several sizes too (linear: the time per record
stays flat).

    python bench/export_records.py [--data-dir ../shared/data/worldsense] [--records 87048]
                                   [--sizes 20000,87048] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "worldsense"


def _timed(args: list[str]) -> tuple[float, float, float]:
    """(wall s, CPU s, peak MB) of one `mindprobe` command as a process of its own (`wait4`:
    that child's own usage)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "mindprobe.cli", *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"mindprobe {' '.join(args)} failed ({proc.returncode})")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024  # Linux: KB


def seed_run(root: Path, data_dir: Path, items: int) -> Path:
    """A real WorldSense run on `random` of about `items` trials."""
    runs = root / "seed-runs"
    subprocess.run([sys.executable, "-m", "mindprobe.cli", "run", "worldsense", "--model",
                    "random", "--limit", str(items), "--data-dir", str(data_dir),
                    "--runs-dir", str(runs), "--no-cache"], check=True,
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
    parser.add_argument("--keep", type=Path, help="a folder to keep the runs and exports in")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        seed = seed_run(root, args.data_dir, args.seed_items)
        sizes = sorted({int(s) for s in args.sizes.split(",") if s} | {args.records})
        print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
        for n in sizes:
            run_dir = synthesise(seed, root / f"run-{n}", n)
            wall, cpu, rss = _timed(["export", "--format", "inspect", "--run", str(run_dir),
                                     "--out", str(root / f"run-{n}.eval")])
            print(f"export --format inspect, {n:,} records: {wall:.1f} s wall, {cpu:.1f} s "
                  f"CPU ({1000 * cpu / n:.2f} ms a record), peak {rss:.0f} MB")
        run_dir = root / f"run-{args.records}"
        for fmt, out in (("parquet", root / "run.parquet"), ("hf", root / "hf")):
            wall, cpu, _ = _timed(["export", "--format", fmt, "--run", str(run_dir), "--out",
                                   str(out)])
            print(f"export --format {fmt}, {args.records:,} records: {wall:.1f} s wall, "
                  f"{cpu:.1f} s CPU")
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
