"""Where every number came from: per run the model's identity, the data (file, sha256, version
or generator seed), the sampling settings, the mindprobe version, times, token usage summed
over the records and, given prices, what the run cost."""

from __future__ import annotations

import json
from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING, Any

from mindprobe.core.inputs import parse_numbers

if TYPE_CHECKING:  # annotations only: a plan reads `parse_price` without the report's modules
    from mindprobe.report.collect import ReportData, RunEntry


@dataclass(frozen=True)
class Price:
    """USD per million tokens: prompt (input) and completion (output)."""

    prompt: float
    completion: float

    def cost(self, usage: dict[str, int]) -> float:
        return (usage.get("prompt_tokens", 0) * self.prompt
                + usage.get("completion_tokens", 0) * self.completion) / 1e6


def parse_price(text: str | None) -> Price | None:
    """`IN,OUT` (or one number for both) in USD per million tokens, finite and not negative."""
    if text is None:
        return None
    values = parse_numbers(text, "--price", (1, 2),
                           "IN,OUT in USD per million tokens (e.g. 2.5,10)")
    return Price(values[0], values[-1])


def usage_by_role(e: RunEntry) -> dict[str, dict[str, int]]:
    """Tokens per role (model, judge, …) summed over the run's records; errors counted."""
    from mindprobe.core.runner import total_usage, usage_summary

    out = {"model": usage_summary(e.run.records)}
    for role, u in total_usage(e.run.records).items():
        if role != "model":
            out[role] = u.as_dict()
    return out


def _json(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False, sort_keys=True, default=str)


def provenance(e: RunEntry, price: Price | None) -> list[tuple[str, str]]:
    """(field, text) rows describing one run."""
    m = e.run.manifest
    models = m.get("models") or {}
    rows = [("run directory", str(e.run.dir)),
            ("benchmark", f"{e.benchmark}:{e.run.variant} ({e.run.prompting})"),
            ("status", e.run.state.text()),
            ("items", f"{len(e.run.records):,} recorded of {m.get('n_items', '?')} planned"
                      + (f", {e.n_errors} with errors" if e.n_errors else ""))]
    for role, info in models.items():
        if isinstance(info, dict):
            caps = ", ".join(info.get("capabilities") or []) or "none"
            rows.append((f"{role} model", f"{info.get('spec')} (label {info.get('label')}; "
                         f"capabilities: {caps})"))
            if info.get("identity"):
                rows.append((f"{role} identity", _json(info["identity"])))
    if not models:
        rows.append(("model", _json(m.get("model_identity") or m.get("model"))))
    rows += [("data", _json(m.get("data", {}))),
             ("sampling / config", _json(m.get("config", {}))),
             ("options", _json(m.get("options", {}))),
             ("mindprobe version", str(m.get("mindprobe_version", "?"))),
             ("started / ended", f"{m.get('started', '?')} → {m.get('ended', '—')}")]
    if m.get("command"):
        rows.append(("command", str(m["command"])))
    for role, u in usage_by_role(e).items():
        text = (f"{u.get('requests', 0):,} requests (+{u.get('cache_hits', 0):,} from cache) · "
                f"prompt {u.get('prompt_tokens', 0):,} (cached {u.get('cached_prompt_tokens', 0):,})"
                f" · completion {u.get('completion_tokens', 0):,}")
        rows.append((f"tokens ({role})", text))
        if price is not None:
            rows.append((f"cost ({role})", f"${price.cost(u):,.4f} at ${price.prompt:g} / "
                         f"${price.completion:g} per M prompt / completion tokens"))
    return rows


def total_cost(data: ReportData, price: Price) -> float:
    return sum(price.cost(u) for e in data.entries for u in usage_by_role(e).values())


def provenance_html(data: ReportData, price: Price | None) -> str:
    parts = []
    if price is not None:
        parts.append(f'<p>Total cost of all runs: <b>${total_cost(data, price):,.4f}</b> '
                     f"(prompt ${price.prompt:g}, completion ${price.completion:g} per million "
                     "tokens; cached prompt tokens are priced as prompt tokens).</p>")
    for e in data.entries:
        rows = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>"
                       for k, v in provenance(e, price))
        parts.append(f'<details class="prov" open><summary>{escape(e.benchmark)} · '
                     f'{escape(e.title)}</summary><table class="kv">{rows}</table></details>')
    return "".join(parts)
