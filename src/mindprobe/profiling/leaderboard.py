"""Several profiles as one leaderboard: one row per model, one column per benchmark headline
with its 95% interval, in the units the profile table uses (percent where the headline is a
share). Written as CSV or JSON for a team's sheet or dashboard."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mindprobe.core.files import check_target, write_file
from mindprobe.core.paths import check_parent
from mindprobe.errors import UsageError
from mindprobe.profiling.manifest import read_profile


def _headlines(folder: Path) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    from mindprobe.core.store import load_run

    profile = read_profile(folder)
    out: dict[str, dict[str, Any]] = {}
    for bench, dirs in sorted(profile.runs.items()):
        for d in dirs:
            run = load_run(d)
            h = run.results().headline
            if h is None:
                continue
            scale = 100.0 if h.percent else 1.0
            key = bench if len(dirs) == 1 else f"{bench}:{run.variant}"
            out[key] = {"metric": h.name, "unit": "%" if h.percent else h.unit.strip(),
                        "value": None if h.value is None else h.value * scale,
                        "ci_low": None if h.ci_low is None else h.ci_low * scale,
                        "ci_high": None if h.ci_high is None else h.ci_high * scale,
                        "n": h.n, "status": run.status}
    return profile.doc, out


def leaderboard(folders: list[Path]) -> list[dict[str, Any]]:
    """One row per profile: model, size, then per benchmark its value, ci_low and ci_high."""
    rows = []
    for folder in folders:
        doc, heads = _headlines(folder)
        row: dict[str, Any] = {"model": doc.get("model_label"), "size": doc.get("size"),
                               "profile": str(folder)}
        for bench, h in heads.items():
            name = f"{bench} {h['metric']}" + (f" ({h['unit']})" if h["unit"] else "")
            row[name] = h["value"]
            row[f"{name} ci_low"] = h["ci_low"]
            row[f"{name} ci_high"] = h["ci_high"]
        rows.append(row)
    return rows


def check_leaderboard_out(out: Path, replace: bool) -> None:
    """Refuse, before the comparison is made, an --out the leaderboard cannot be written to."""
    if out.suffix.lower() not in (".csv", ".json"):
        raise UsageError(f"{out}: a leaderboard is written as .csv or .json")
    check_parent(out, "--out")
    check_target(out, replace=replace, flag="--out")


def write_leaderboard(rows: list[dict[str, Any]], out: Path, replace: bool = False) -> None:
    """CSV (by pandas) or JSON, by the file's extension (`core.files`: an existing file only
    with `replace`)."""
    import pandas as pd

    check_leaderboard_out(out, replace)
    if out.suffix.lower() == ".csv":
        text = pd.DataFrame(rows).to_csv(index=False)
    else:
        text = json.dumps(rows, indent=2, ensure_ascii=False) + "\n"
    write_file(out, text, replace=replace, flag="--out")
