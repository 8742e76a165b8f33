"""What a tracker receives for a run: its identity as parameters, every number of its results
as metrics under stable names, and its files as artifacts; the same for any benchmark, read
from the manifest and the results tables (so this module knows no benchmark)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from mindprobe.core.results import Results, table_json
from mindprobe.version import __version__

#: Manifest fields that identify a run (as `IDENTITY_FIELDS`) plus what a team filters by.
PARAM_FIELDS = ("benchmark", "variant", "prompting", "model", "model_label", "model_identity",
                "options", "config", "data", "n_items", "concurrency", "command")
#: Longest parameter value a tracker takes whole (MLflow: 6,000 characters).
MAX_PARAM = 6000
_UNSAFE = re.compile(r"[^A-Za-z0-9_\-. /]+")


def metric_name(*parts: Any) -> str:
    """A stable metric name: parts joined by `/`, each part's unsafe characters as `_`
    (what MLflow and W&B both accept), `%` spelled `pct`."""
    clean = [_UNSAFE.sub("_", str(p).replace("%", "pct").replace("±", "pm")).strip("_ ")
             for p in parts if str(p) != ""]
    return "/".join(c for c in clean if c)


def flatten(prefix: str, value: Any, out: dict[str, str]) -> None:
    """Nested manifest values as `a.b.c` keys with JSON-ish text values."""
    if isinstance(value, dict) and value:
        for k, v in value.items():
            flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
        return
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    out[prefix] = text if len(text) <= MAX_PARAM else text[:MAX_PARAM - 1] + "…"


def params_of(manifest: dict[str, Any]) -> dict[str, str]:
    """The run's identity, as the manifest holds it, flattened (plus the mindprobe version)."""
    out: dict[str, str] = {}
    for key in PARAM_FIELDS:
        if key in manifest:
            flatten(key, manifest[key], out)
    out["seed"] = str((manifest.get("config") or {}).get("seed"))
    out["mindprobe_version"] = str(manifest.get("mindprobe_version", __version__))
    return out


def _number(v: Any) -> float | None:
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, int | float) and math.isfinite(v):
        return float(v)
    return None


def metrics_of(bench: str, res: Results) -> dict[str, float]:
    """The headline with its interval ends and every number of every table:
    `BENCH/headline/NAME[/ci_low|/ci_high]`, `BENCH/TABLE/COLUMN[/ROW]` (ROW: the row's label
    columns joined by `.`, left out where the table has one row)."""
    out: dict[str, float] = {}
    h = res.headline
    if h is not None:
        for suffix, v in (("", h.value), ("ci_low", h.ci_low), ("ci_high", h.ci_high)):
            if _number(v) is not None:
                out[metric_name(bench, "headline", h.name, suffix)] = _number(v)
    for name, table in res.tables.items():
        rows = table_json(table)
        labels = [c for c in (rows[0] if rows else {}) if all(
            isinstance(r.get(c), str) or r.get(c) is None for r in rows)]
        for i, row in enumerate(rows):
            label = ".".join(str(row[c]) for c in labels if row.get(c) is not None) or str(i)
            for col, v in row.items():
                if col in labels or _number(v) is None:
                    continue
                key = metric_name(bench, name, col, label if len(rows) > 1 else "")
                out.setdefault(key, _number(v))
    if res.invalid is not None:
        out[metric_name(bench, "invalid", "count")] = float(res.invalid[0])
    if res.failed is not None:
        out[metric_name(bench, "failed", "errors")] = float(res.failed[0])
    return out


def artifacts_of(run_dir: Path) -> list[Path]:
    """The run's files a team keeps beside the numbers: records, manifest, shared texts."""
    return [p for p in (run_dir / "records.jsonl", run_dir / "manifest.json",
                        run_dir / "texts.jsonl") if p.is_file()]
