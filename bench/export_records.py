"""Export speed: a whole WorldSense test-set run (87,048 records) on `random`, then
`mindprobe export --format parquet` and `--format hf`, each timed as a whole process; and the
time to load the records back from JSON Lines against Parquet (what a pandas user pays).

    python bench/export_records.py [--data-dir ../shared/data/worldsense] [--keep DIR]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "worldsense"


def _timed(args: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "mindprobe.cli", *args], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--keep", type=Path, help="a folder to keep the run and exports in")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        runs = root / "runs"
        t_run = _timed(["run", "worldsense", "--model", "random", "--data-dir",
                        str(args.data_dir), "--runs-dir", str(runs), "--no-cache"])
        run_dir = next(runs.glob("worldsense/*/*"))
        n = sum(1 for _ in (run_dir / "records.jsonl").open())
        t_pq = _timed(["export", "--format", "parquet", "--run", str(run_dir), "--out",
                       str(root / "run.parquet")])
        t_hf = _timed(["export", "--format", "hf", "--run", str(run_dir), "--out",
                       str(root / "hf")])
        import pandas as pd

        t0 = time.perf_counter()
        pd.read_json(run_dir / "records.jsonl", lines=True)
        t_json = time.perf_counter() - t0
        t0 = time.perf_counter()
        pd.read_parquet(root / "run.parquet")
        t_read = time.perf_counter() - t0
        print(f"records: {n:,}")
        print(f"run (random, whole process): {t_run:.1f} s")
        print(f"export --format parquet (whole process): {t_pq:.1f} s")
        print(f"export --format hf (whole process): {t_hf:.1f} s")
        print(f"pandas load: JSON Lines {t_json:.2f} s, Parquet {t_read:.2f} s "
              f"({t_json / t_read:.1f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
