"""The profile's two tables as rows: the plan (before any completion is requested) and the profile (one
headline per benchmark and variant, with its interval and the half-width stated in advance)."""

from __future__ import annotations

from typing import Any

from mindprobe.core.estimate import HEURISTIC
from mindprobe.core.results import Results
from mindprobe.profiling.plan import Entry


def plan_rows(entries: list[Entry], price: tuple[float, float] | None) -> list[dict[str, Any]]:
    """One row per benchmark: setting, items (done), requests, tokens (upper bound and
    expected), cost, stated 95% half-width, status."""
    rows = []
    for e in entries:
        est = e.estimate
        row: dict[str, Any] = {
            "benchmark": e.name, "setting": e.setting, "items": e.items, "done": e.done,
            "requests": est.get("requests", est.get("turns")),
            "expected requests": est.get("expected_requests", est.get(
                "expected_turns", est.get("requests", est.get("turns")))),
            "prompt tokens": est.get("prompt_tokens"),
            "prefill (prefix reuse)": est.get("prefill_tokens"),
            "completion tokens": est.get("completion_tokens"),
            "expected prompt": est.get("expected_prompt_tokens", est.get("prompt_tokens")),
            "expected completion": est.get("expected_completion_tokens",
                                           est.get("completion_tokens")),
            "expected prefill": est.get("expected_prefill_tokens", est.get("prefill_tokens")),
            "expected seconds": est.get("expected_seconds"),
            "assumes": est.get("expected_assumes") or est.get("note"),
            "estimated": next((p.estimated.to_json() for _, p in e.plans
                               if p.estimated is not None), None),
            "tokens counted": est.get("counted", HEURISTIC) if est else None,
            "±95% stated": e.half_width, "unit": e.unit.strip(),
            "precision": e.precision.basis if e.precision is not None else None,
            "status": e.status, "reason": e.reason, "enable": e.enable, "notes": e.notes,
        }
        if price is not None and row["prompt tokens"] is not None:
            row["cost (USD)"] = (row["expected prompt"] * price[0]
                                 + (row["expected completion"] or 0) * price[1]) / 1e6
            row["cost bound (USD)"] = (row["prompt tokens"] * price[0]
                                       + (row["completion tokens"] or 0) * price[1]) / 1e6
        rows.append(row)
    return rows


def profile_rows(entries: list[Entry], results: dict[str, dict[str, Results]]
                 ) -> list[dict[str, Any]]:
    """One row per benchmark and variant run: its headline, 95% CI, n and the stated ±."""
    rows = []
    for e in entries:
        for variant, res in results.get(e.name, {}).items():
            h = res.headline
            scale = 100.0 if h is not None and h.percent else 1.0
            value = None if h is None or h.value is None else h.value * scale
            lo = None if h is None or h.ci_low is None else h.ci_low * scale
            hi = None if h is None or h.ci_high is None else h.ci_high * scale
            rows.append({
                "benchmark": e.name, "variant": variant,
                "metric": h.name if h is not None else "–",
                "value": value, "ci_low": lo, "ci_high": hi,
                "±95%": None if lo is None or hi is None else (hi - lo) / 2,
                "±95% stated": _stated(e, variant),
                "unit": "%" if h is not None and h.percent else (h.unit.strip() if h else ""),
                "n": h.n if h is not None else None,
                "run": str(res.run_dir) if res.run_dir else None,
            })
    return rows


def skipped_rows(entries: list[Entry], results: dict[str, dict[str, Results]]
                 ) -> list[dict[str, Any]]:
    """One row per planned benchmark that did not run (it lacks data, or cannot run for this
    model): its setting, why, and the command or `-O` that fixes it. Never left out."""
    return [{"benchmark": e.name, "setting": e.setting, "status": e.outcome,
             "reason": e.reason, "fix": e.enable}
            for e in entries if not results.get(e.name)]


def _stated(e: Entry, variant: str) -> float | None:
    """The half-width stated for this variant's run (the plan's widest where unknown)."""
    p = e.precisions.get(variant)
    return p.half_width if p is not None else e.half_width
