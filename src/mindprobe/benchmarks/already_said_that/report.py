"""Terminal tables for Already Said That: one variant, all variants side by side, estimates."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from mindprobe.benchmarks.already_said_that.metrics import METRIC_NAMES


def _fmt(v: Any) -> str:
    if v is None:
        return "nan"
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


def render_variant(metrics: dict[str, Any], console: Console) -> None:
    if not metrics.get("n_samples"):
        console.print("no finished samples to aggregate")
        return
    t = Table(title=f"Already Said That ({metrics['n_samples']} samples)", title_justify="left")
    t.add_column("metric")
    t.add_column("value", justify="right")
    for name in METRIC_NAMES:
        t.add_row(name, _fmt(metrics.get(name)))
    console.print(t)


def render_side_by_side(docs: dict[str, dict[str, Any]], console: Console) -> None:
    t = Table(title="Already Said That, all variants", title_justify="left")
    t.add_column("metric")
    for variant in docs:
        t.add_column(variant, justify="right")
    for name in [*METRIC_NAMES, "n_samples"]:
        t.add_row(name, *(_fmt(d.get(name)) for d in docs.values()))
    console.print(t)


def render_estimate(
    variant: str, est: dict[str, Any], price: tuple[float, float] | None, console: Console
) -> None:
    """Tokens a run would take if the model survived every turn (the upper bound)."""
    resend, reuse, out = est["prompt_tokens"], est["prefill_tokens"], est["completion_tokens"]
    t = Table(
        title=f"estimate for {variant}: {est['samples']} samples, {est['turns']} turns "
        "(every chat survives to the end: an upper bound; ~4 characters per token)",
        title_justify="left",
    )
    t.add_column("")
    t.add_column("prompt tokens", justify="right")
    t.add_column("completion tokens", justify="right")
    if price:
        t.add_column("cost (USD)", justify="right")
    for label, prompt in (("resend every turn", resend), ("with prefix reuse", reuse)):
        row = [label, f"{prompt:,}", f"{out:,}"]
        if price:
            row.append(f"{(prompt * price[0] + out * price[1]) / 1e6:,.2f}")
        t.add_row(*row)
    console.print(t)
    ratio = resend / reuse if reuse else float("nan")
    console.print(f"prefix reuse prefills {ratio:.1f}x fewer prompt tokens")
