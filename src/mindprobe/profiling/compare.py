"""Two profiles of one size side by side: per benchmark and variant, B − A on the items both
ran, with the report's paired comparison (a paired-bootstrap 95% interval of the per-item
score difference; each benchmark's per-item score is the report's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mindprobe.errors import UsageError
from mindprobe.profiling.manifest import read_profile


def compare_profiles(a: Path, b: Path) -> list[dict[str, Any]]:
    """One row per benchmark and variant both profiles ran."""
    from mindprobe.report.collect import collect
    from mindprobe.report.compare import compare

    pa, pb = read_profile(a), read_profile(b)
    ma, mb = pa.doc, pb.doc
    if ma.get("size") != mb.get("size"):
        raise UsageError(f"the profiles have different sizes ({ma.get('size')} and "
                         f"{mb.get('size')}): their items differ; compare profiles of one size")
    da, db = collect(pa.run_dirs()), collect(pb.run_dirs())
    by_key = {(e.benchmark, e.run.variant, e.run.prompting): e for e in db.entries}
    rows = []
    for ea in da.entries:
        eb = by_key.get((ea.benchmark, ea.run.variant, ea.run.prompting))
        if eb is None:
            continue
        c = compare(ea, eb)  # its difference is A − B
        scale = 1.0 if not c.binary else 100.0
        rows.append({
            "benchmark": ea.benchmark, "variant": ea.run.variant,
            "metric": c.score_name + (" (%)" if c.binary else ""),
            "a": None if c.mean_a is None else c.mean_a * scale,
            "b": None if c.mean_b is None else c.mean_b * scale,
            "difference": None if c.diff is None or c.ci is None else 0.0 - c.diff * scale,
            "ci_low": None if c.ci is None else 0.0 - c.ci[1] * scale,
            "ci_high": None if c.ci is None else 0.0 - c.ci[0] * scale,
            "n": c.n, "p_mcnemar": c.p_exact, "note": c.note,
            "a_run": str(ea.run.dir), "b_run": str(eb.run.dir),
        })
    if not rows:
        raise UsageError(f"{a} and {b} share no benchmark run")
    return rows
