"""Already Said That results as tables: one variant, all variants side by side, estimates."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from mindprobe.benchmarks.already_said_that.metrics import METRIC_NAMES, aggregate
from mindprobe.core.results import Headline, Results
from mindprobe.core.stats import mean_ci


def results_of_records(records: list[dict[str, Any]], variant: str) -> Results:
    """The 14 upstream metrics (NaN -> null), the headline turns survived with a 95% CI."""
    out = Results("already_said_that")
    ok = [r for r in records if "error" not in r]
    out.detail = {"n_samples": len(ok), "variant": variant}
    if not ok:
        out.warnings.append("no finished samples to aggregate")
        return out
    m = {k: (None if isinstance(v, float) and math.isnan(v) else v)
         for k, v in aggregate(ok).items()}
    out.detail.update(m)
    lo, hi = mean_ci([float(r["num_turns"]) for r in ok])
    out.headline = Headline("avg_num_turns", m["avg_num_turns"], lo, hi, unit=" turns",
                            n=len(ok), ci_method="t interval over samples")
    frame = pd.DataFrame({"metric": list(METRIC_NAMES),
                          "value": [m.get(k) for k in METRIC_NAMES]})
    out.add_table("metrics", frame, f"Already Said That {variant} ({len(ok)} samples)",
                  index=False)
    violations = m.get("violation_rate") or 0.0
    if violations > 0.5:
        out.warnings.append(
            f"{violations:.0%} of chats ended on a reply that was not `[answer: yes]`/`[answer: "
            "no]` (nor a distractor answer): the model mostly did not follow the answer format")
    return out


def side_by_side(by_variant: dict[str, Results]) -> Results:
    out = Results("already_said_that")
    cols = {v: [r.detail.get(k) for k in [*METRIC_NAMES, "n_samples"]]
            for v, r in by_variant.items()}
    frame = pd.DataFrame({"metric": [*METRIC_NAMES, "n_samples"], **cols})
    out.add_table("all_variants", frame, "Already Said That, all variants", index=False)
    for r in by_variant.values():
        out.warnings += r.warnings
    return out


def estimate_results(variant: str, est: dict[str, Any],
                     price: tuple[float, ...] | None) -> Results:
    """Tokens a run would take if the model survived every turn (the upper bound), and what
    each way of paying for them costs: full re-send per turn (what a chat API bills), provider
    prompt caching at a discount (with a third price), prefix reuse on a local/vLLM engine."""
    resend, reuse, completion = est["prompt_tokens"], est["prefill_tokens"], est["completion_tokens"]
    rows = []
    ways: list[tuple[str, int, float | None]] = [
        ("resend every turn (a chat API bills this)", resend, None)]
    if price and len(price) > 2:
        ways.append((f"provider prompt caching (cached input at {price[2]:g} USD/M)", resend,
                     price[2]))
    ways.append(("prefix reuse on a local / vLLM engine (prefill only)", reuse, None))
    for label, prompt, cached_price in ways:
        row: dict[str, Any] = {"": label, "prompt tokens": prompt, "completion tokens": completion}
        if price:
            if cached_price is None:
                cost = prompt * price[0]
            else:
                cost = reuse * price[0] + (resend - reuse) * cached_price
            row["cost (USD)"] = round((cost + completion * price[1]) / 1e6, 2)
        rows.append(row)
    out = Results("already_said_that")
    out.detail = {"estimate": est, "variant": variant}
    out.add_table("estimate", pd.DataFrame(rows),
                  f"estimate for {variant}: {est['samples']} samples, {est['turns']} turns "
                  "(every chat survives to the end: an upper bound; ~4 characters per token)",
                  index=False)
    ratio = resend / reuse if reuse else float("nan")
    out.notes.append(f"prefix reuse prefills {ratio:.1f}x fewer prompt tokens")
    return out
