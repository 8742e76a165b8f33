"""WorldSense's tuple variance: the measurement behind the half-widths plans state.

The paper's 95% interval is 1.96·√(V/N) over tuples (spec §3.5); a plan knows N from the tuples
it samples and takes V as the largest measured on the full test set: each released results
file's and a uniform guess's. Prints V per model, its design effect against a share over the
same trials (V·trials/tuples / 0.25), and the constant to keep in
src/mindprobe/benchmarks/worldsense/precision.py (TUPLE_VARIANCE).

    python bench/worldsense_design_effect.py [--testset ../shared/data/worldsense/test_set]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mindprobe.benchmarks.worldsense.precision import TUPLE_VARIANCE, measured_variances

DEFAULT_TESTSET = Path(__file__).resolve().parents[2] / "shared" / "data" / "worldsense" / "test_set"
TRIALS_PER_TUPLE = 87048 / 40176  # the test set's


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--testset", type=Path, default=DEFAULT_TESTSET)
    parser.add_argument("--seed", type=int, default=0, help="seed of the uniform guess")
    args = parser.parse_args()
    variances = measured_variances(args.testset, args.seed)
    print(f"{'model':<14} {'V (tuple var)':>13} {'deff (equal cells)':>19}")
    for model, v in sorted(variances.items(), key=lambda kv: -kv[1]):
        print(f"{model:<14} {v:>13.4f} {v * TRIALS_PER_TUPLE / 0.25:>19.2f}")
    largest = max(variances.values())
    print(f"largest V {largest:.4f}; precision.TUPLE_VARIANCE = {TUPLE_VARIANCE}")
    return 0 if abs(round(largest, 4) - TUPLE_VARIANCE) < 5e-4 else 1


if __name__ == "__main__":
    raise SystemExit(main())
