"""WorldSense analysis speed: load the official test set + 4 results files, then score them.

Prints load and analysis times separately (best of --repeat for the analysis), peak RSS, and
the upstream-style tables. Targets: trials load in a few seconds, analysis < 0.5 s.

    python bench/worldsense_analysis.py [--testset ../shared/data/worldsense/test_set]
                                        [--repeat 5]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

from mindprobe.benchmarks.worldsense import analyse, load_results, load_testset, render_text

DEFAULT_TESTSET = Path(__file__).resolve().parents[2] / "shared" / "data" / "worldsense" / "test_set"


def _peak_rss_mib() -> float:
    """Peak resident set size of this process (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--testset", type=Path, default=DEFAULT_TESTSET)
    parser.add_argument("--repeat", type=int, default=5, help="analysis repetitions (best kept)")
    args = parser.parse_args()

    t0 = time.perf_counter()
    trials = load_testset(args.testset)
    t1 = time.perf_counter()
    results = load_results(args.testset)
    t2 = time.perf_counter()
    timings = []
    for _ in range(max(1, args.repeat)):
        start = time.perf_counter()
        analysis = analyse(trials, results)
        timings.append(time.perf_counter() - start)

    print(render_text(analysis, args.testset))
    print(f"trials:   {len(trials):>7} rows loaded in {t1 - t0:.2f} s")
    print(f"results:  {len(results):>7} rows loaded in {t2 - t1:.2f} s")
    print(f"analysis: best {min(timings):.3f} s, median {sorted(timings)[len(timings) // 2]:.3f} s"
          f" over {len(timings)} runs")
    print(f"peak RSS: {_peak_rss_mib():.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
