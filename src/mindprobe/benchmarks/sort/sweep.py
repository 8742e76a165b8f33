"""Choosing SORT's prompt from a validation sweep (spec §4.5) by a stated rule, with ties and
the winner's margin (a paired interval and test over the shared validation rows) reported, so
"best prompt" is never a claim without its evidence."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from mindprobe.core.results import Results
from mindprobe.core.stats import paired_difference

RULE = ("highest validation accuracy (macro over conditions); a tie goes to the prompt listed "
        "first (prompt_0 is the paper's)")


def choose(rows: Sequence[Mapping[str, Any]], records: Mapping[str, list[dict[str, Any]]]
           ) -> tuple[str, Results]:
    """(best prompt, the sweep's table and notes). `rows`: prompt, accuracy, n, run, in the
    order tried; `records`: each prompt's validation records (for the paired margin)."""
    table = pd.DataFrame(list(rows))
    top = table["accuracy"].max()
    tied = [r["prompt"] for r in rows if r["accuracy"] is not None and r["accuracy"] == top]
    best = tied[0]
    out = Results("sort")
    table["rank"] = table["accuracy"].rank(ascending=False, method="min").astype("Int64")
    out.add_table("sweep", table, "prompt sweep on the validation rows (accuracy = macro over "
                  "conditions)", percent=("accuracy",), index=False)
    out.notes.append(f"rule: {RULE}")
    if len(tied) > 1:
        out.warnings.append(f"{len(tied)} prompts tie at {100 * top:.1f}%: {', '.join(tied)}; "
                            f"{best} chosen by the rule, not by the data")
    others = [r for r in rows if r["prompt"] != best and r["accuracy"] is not None]
    if others:
        second = max(others, key=lambda r: r["accuracy"])["prompt"]
        margin = margin_between(records.get(best, []), records.get(second, []))
        out.detail["margin"] = {"best": best, "runner_up": second, **margin.as_dict()}
        out.notes.append(f"best prompt: {best}, ahead of {second} by "
                         f"{margin.text(scale=100, unit=' pp')}")
    else:
        out.notes.append(f"best prompt: {best} (the only one tried)")
    out.detail["best_prompt"], out.detail["tied"] = best, tied
    return best, out


def margin_between(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> Any:
    """Paired difference of two prompts' right/wrong over the validation rows both answered."""
    key = _row_key
    right_b = {key(r): float(bool(r.get("correct"))) for r in b if "error" not in r}
    pairs = [(float(bool(r.get("correct"))), right_b[key(r)]) for r in a
             if "error" not in r and key(r) in right_b]
    return paired_difference([x for x, _ in pairs], [y for _, y in pairs])


def _row_key(rec: Mapping[str, Any]) -> Any:
    """The same validation row under another prompt: its id without the prompt's part."""
    return rec.get("row_id", rec.get("id"))
