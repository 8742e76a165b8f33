"""Whether a run directory may be resumed by a new plan, and why not.

A resumed run must be the same experiment: the same benchmark, variant, model, config and data
(the store's identity fields). Two things may change: how many items (a larger `--limit`, or a
benchmark's sample size such as `--n-samples`, named in `RunPlan.sizes`) extends the run, as
long as every recorded item is planned again unchanged; anything else, a smaller sample
included, is refused with what differs and what to do.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path
from typing import Any

from mindprobe.errors import UsageError


def check_identity(run_dir: Path, old: dict[str, Any], new: dict[str, Any],
                   fields: tuple[str, ...], hint: str, sizes: Collection[str] = ()) -> None:
    """Refuse to resume the run of manifest `old` with manifest `new` unless it is the same
    experiment; config keys in `sizes` only say how many items there are and may differ
    (`check_planned` then checks the items themselves)."""
    for key in fields:
        was, now = old.get(key), new.get(key)
        if key == "config" and sizes and isinstance(was, dict) and isinstance(now, dict):
            was = {k: v for k, v in was.items() if k not in sizes}
            now = {k: v for k, v in now.items() if k not in sizes}
            if was != now:
                raise UsageError(f"{run_dir} holds a run with a different config "
                                 f"({_difference(was, now)}); {hint}")
            continue
        if not _same_field(key, old, new):
            shown = "model_identity" if key == "model" and old.get(
                "model_identity") and new.get("model_identity") else key
            raise UsageError(f"{run_dir} holds a run with a different {shown} "
                             f"({_difference(old.get(shown), new.get(shown))}); {hint}")


def check_planned(run_dir: Path, recorded: dict[str, dict[str, Any]],
                  planned: dict[str, str | None], hint: str) -> None:
    """Refuse a plan that leaves recorded items out (a smaller --limit or sample), or that
    puts another item under a recorded id (`Item.key`: a sample drawn differently at another
    size): the run's results would mix two experiments."""
    left_out = [i for i in recorded if i not in planned]
    if left_out:
        raise UsageError(
            f"{run_dir} holds {len(recorded):,} recorded items, {len(left_out):,} of which "
            f"this plan leaves out (a smaller --limit or sample than the run's): give the "
            f"run's own size or a larger one to resume or extend it, read it as it is with "
            f"`mindprobe analyse`, or {hint}")
    moved = [(i, r["item_key"], planned[i]) for i, r in recorded.items()
             if r.get("item_key") is not None and planned[i] is not None
             and r["item_key"] != planned[i]]
    if moved:
        i, was, now = moved[0]
        raise UsageError(
            f"{run_dir}: item {i} was {was} and would now be {now} ({len(moved):,} recorded "
            f"items differ): at this size the items are drawn differently, so this plan does "
            f"not extend the run; give the run's own size, or {hint}")


def within(new: Any, old: Any) -> bool:
    """Whether `new` says nothing `old` does not: equal, or a dict whose every key `old` holds
    with a value `new`'s is within."""
    if isinstance(new, dict) and isinstance(old, dict):
        return all(k in old and within(v, old[k]) for k, v in new.items())
    return new == old


def _same_field(key: str, old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether a resumed run keeps `key`. The model is compared by identity where both
    manifests record one, so `host:port`, `http://host:port/v1/` and the like (one endpoint,
    one cache) resume the same run."""
    if key == "model" and old.get("model_identity") and new.get("model_identity"):
        return old["model_identity"] == new["model_identity"]
    return old.get(key) == new.get(key)


def _difference(old: Any, new: Any) -> str:
    """Which settings differ, e.g. `reasks: 1 (recorded) vs 2 (now)`."""
    if isinstance(old, dict) and isinstance(new, dict):
        keys = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
        if keys:
            return "; ".join(f"{k}: {_short(old.get(k))} (recorded) vs {_short(new.get(k))} (now)"
                             for k in keys[:4])
    return f"{_short(old)} (recorded) vs {_short(new)} (now)"


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 80 else text[:77] + "..."
