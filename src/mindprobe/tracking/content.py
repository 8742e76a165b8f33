"""What a tracker receives for a run: its identity as parameters, every number of its results
as metrics under stable names, and its files as artifacts; the same for any benchmark, read
from the manifest and the results tables (so this module knows no benchmark)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from mindprobe.core.results import Results, Table, table_json
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


def row_keys(table: Table, rows: list[dict[str, Any]]) -> list[str]:
    """The columns that name a row's metrics: the table's declared `keys`, else its named
    index, else its leading text columns (a text column further right, such as the interval
    method or the majority answer, is a value, not what the row is)."""
    if table.keys is not None:
        return [c for c in table.keys if rows and c in rows[0]]
    named = [str(n) for n in table.frame.index.names if n is not None] if table.index else []
    if named:
        return named
    keys = []
    for col in (rows[0] if rows else {}):
        if not all(isinstance(r.get(col), str) or r.get(col) is None for r in rows):
            break
        keys.append(col)
    return keys


def table_metrics(bench: str, name: str, table: Table) -> dict[str, float]:
    """`BENCH/TABLE/COLUMN/ROW` for every number of the table: ROW joins the row's key
    values with `.` (left out for a one-row table, the row's position where the table has no
    keys); a column shown as a percentage is sent in percent, and a number column's empty
    cell as NaN (so the names never depend on the values)."""
    rows = table_json(table)
    keys = row_keys(table, rows)
    columns = [c for c in (rows[0] if rows else {}) if c not in keys and all(
        r.get(c) is None or _number(r.get(c)) is not None for r in rows)]
    out: dict[str, float] = {}
    for i, row in enumerate(rows):
        label = ".".join(str(row[c]) for c in keys if row.get(c) is not None) or str(i)
        for col in columns:
            value = _number(row.get(col))
            value = math.nan if value is None else value
            if col in table.percent:
                value *= 100
            key = metric_name(bench, table.tracked_as or name, col,
                              label if len(rows) > 1 else "")
            out.setdefault(key, value)
    return out


def metrics_of(bench: str, res: Results) -> dict[str, float]:
    """The headline with its interval ends and every number of every table:
    `BENCH/headline/NAME[/ci_low|/ci_high]`, `BENCH/TABLE/COLUMN[/ROW]` (see
    `table_metrics`). One unit: every share in percent (0-100), the headline as the tables."""
    out: dict[str, float] = {}
    h = res.headline
    if h is not None:
        scale = 100.0 if h.percent else 1.0
        for suffix, v in (("", h.value), ("ci_low", h.ci_low), ("ci_high", h.ci_high)):
            value = _number(v)
            out[metric_name(bench, "headline", h.name, suffix)] = (
                math.nan if value is None else value * scale)
    for name, table in res.tables.items():
        for key, value in table_metrics(bench, name, table).items():
            out.setdefault(key, value)
    if res.invalid is not None:
        out[metric_name(bench, "invalid", "count")] = float(res.invalid[0])
    if res.failed is not None:
        out[metric_name(bench, "failed", "errors")] = float(res.failed[0])
    return out


def artifacts_of(run_dir: Path) -> list[Path]:
    """The run's files a team keeps beside the numbers: records, manifest, shared texts."""
    return [p for p in (run_dir / "records.jsonl", run_dir / "manifest.json",
                        run_dir / "texts.jsonl") if p.is_file()]
