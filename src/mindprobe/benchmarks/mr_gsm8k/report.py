"""MR-GSM8K in the report: the published evaluation table of upstream's README, read as data
(never retyped here), as reference rows beside the user's models."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: The header line of the README's "Evaluation Results" table.
HEADER = "Model Eval Method TPR TNR MCC Step S+R/M MR-Score/M MR-Score/A"
_ROW = re.compile(r"^(\S+) (\d+)-shot ([\d.]+)% ([\d.]+)% (-?[\d.]+) ([\d.]+)% ([\d.]+)% "
                  r"(-?[\d.]+) (-?[\d.]+)$")
#: Which files may hold the table: upstream's README (as a seed copy names it, or as is).
NAMES = ("mr_gsm8k_README.md", "README.md")


def readme_tables(dirs: Sequence[Path]) -> list[Path]:
    """README files in these folders that hold the published table."""
    out: dict[Path, None] = {}
    for d in dirs:
        for name in NAMES:
            path = d / name
            if path.is_file() and HEADER in path.read_text(encoding="utf-8", errors="replace"):
                out.setdefault(path.resolve(), None)
    return list(out)


def published_rows(path: Path) -> list[dict[str, Any]]:
    """The table's rows: model, shots and the published numbers (fractions for percentages)."""
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == HEADER)
    rows = []
    for line in lines[start + 1:]:
        m = _ROW.match(line.strip())
        if not m:
            if rows:
                break
            continue
        g = m.groups()
        rows.append({"model": g[0], "shots": int(g[1]), "TPR": float(g[2]) / 100,
                     "TNR": float(g[3]) / 100, "MCC": float(g[4]), "Step": float(g[5]) / 100,
                     "S+R/M": float(g[6]) / 100, "MR-Score/M": float(g[7]),
                     "MR-Score/A": float(g[8])})
    return rows


def published_references(dirs: Sequence[Path]) -> list[Any]:
    """One reference per model of the README's table: MR-Score with error reasons graded by
    GPT-4-Turbo (the /A column), as a judged mindprobe run computes it, on the full set."""
    from mindprobe.benchmarks.mr_gsm8k.item_sources import OFFICIAL_GIT_BLOB
    from mindprobe.core.benchmark import Reference
    from mindprobe.core.results import Headline

    out = []
    for path in readme_tables(dirs):
        for row in published_rows(path):
            out.append(Reference(
                model=row["model"], variant="full", setting={"prompting": f"{row['shots']}shot"},
                headline=Headline("MR-Score", row["MR-Score/A"], n=3000, percent=True),
                source=f"{path}: the Evaluation Results table of MR-GSM8K's README (Zeng et "
                       "al., arXiv 2312.17080), column MR-Score/A (error reasons graded by "
                       f"GPT-4-Turbo; MR-Score/M with manual grading: {row['MR-Score/M']})",
                dataset_version=OFFICIAL_GIT_BLOB))
    return out
