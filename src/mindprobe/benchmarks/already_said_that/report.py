"""Already Said That results as tables: one variant, all variants side by side (the
estimate's: `estimate.py`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from mindprobe.benchmarks.already_said_that.metrics import METRIC_NAMES, aggregate
from mindprobe.core.prompt_file import wording_notes
from mindprobe.core.results import Headline, Results
from mindprobe.core.stats import mean_interval
from mindprobe.report.plots import by_setting, color, num, survival
from mindprobe.report.svg import Line, Series, bar_chart, line_chart, ok

if TYPE_CHECKING:
    from mindprobe.core.store import Run


def token_use(records: list[dict[str, Any]], solver: str = "direct") -> dict[str, Any]:
    """Tokens the model used (as the backend reported them), in total and per turn asked, as
    upstream's README tabulates them per solver (input = prompt, output = completion; reasoning
    tokens are part of the output where the backend reports them). Replies served from the
    response cache cost nothing and are counted as cache hits."""
    keys = ("requests", "cache_hits", "prompt_tokens", "cached_prompt_tokens",
            "completion_tokens", "reasoning_tokens")
    tot = dict.fromkeys(keys, 0)
    turns = 0
    cut = 0
    for r in records:
        u = (r.get("usage") or {}).get("model") or {}
        for k in keys:
            tot[k] += int(u.get(k) or 0)
        turns += len(r.get("transcript") or [])
        cut += int(r.get("truncated_in_reasoning") or 0)
    per_turn = (lambda v: v / turns) if turns else (lambda v: None)
    return {"solver": solver, "samples": len(records), "turns": turns, **tot,
            "total_tokens": tot["prompt_tokens"] + tot["completion_tokens"],
            "prompt_tokens_per_turn": per_turn(tot["prompt_tokens"]),
            "completion_tokens_per_turn": per_turn(tot["completion_tokens"]),
            "reasoning_tokens_per_turn": per_turn(tot["reasoning_tokens"]),
            "completion_tokens_per_sample": (tot["completion_tokens"] / len(records)
                                             if records else None),
            "turns_cut_off_in_thinking": cut}


#: Turn and distractor counts (means, spreads) read with one decimal, as the headline does.
TURN_ROWS = {name: 1 for k in METRIC_NAMES if "num_" in k
             for name in (k, f"{k} *")}


#: What each upstream metric means, shown as the table's legend (the headline marked).
DEFINITIONS = {
    "avg_num_turns": "mean turns survived (headline)",
    "false_positive_rate": "'yes' to a new word / answers to new words",
    "false_negative_rate": "'no' to a seen word / answers to seen words",
    "avg_distractor_accuracy": "distractor questions answered right",
    "violation_rate": "chats ended by a reply in no answer form",
    "avg_num_distractors": "distractor questions per chat",
}


def token_use_by_call(records: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Requests and tokens per call kind (`answer`; CoT also `reason`), as reported."""
    out: dict[str, dict[str, int]] = {}
    for r in records:
        for kind, u in (r.get("usage_by_call") or {}).items():
            tot = out.setdefault(kind, {"requests": 0, "prompt_tokens": 0,
                                        "completion_tokens": 0})
            for k in tot:
                tot[k] += int(u.get(k) or 0)
    return out


def results_of_records(records: list[dict[str, Any]], variant: str,
                       solver: str = "direct", max_turns: int | None = None,
                       config: dict[str, Any] | None = None) -> Results:
    """The 14 upstream metrics (NaN -> null), the headline turns survived with a 95% interval
    that stays within [0, max_turns], and the solver's token use (in total and per call
    kind); notes for wording or settings that are not upstream's (`config`)."""
    out = Results("already_said_that")
    out.notes += wording_notes(config or {})
    ok = [r for r in records if "error" not in r]
    out.detail = {"n_samples": len(ok), "variant": variant, "solver": solver}
    if not ok:
        out.warnings.append("no finished samples to aggregate")
        return out
    m = {k: (None if isinstance(v, float) and math.isnan(v) else v)
         for k, v in aggregate(ok).items()}
    out.detail.update(m)
    turns = [float(r["num_turns"]) for r in ok]
    top = max_turns if max_turns is not None else max(turns)
    ci = mean_interval(turns, bounds=(0.0, float(top)))
    if ci.low is None:
        out.notes.append("no interval for avg_num_turns: " + (
            "a single sample" if len(ok) < 2 else
            f"every sample survived the same number of turns ({turns[0]:g})"))
    chance = chance_turns(int(top))
    out.headline = Headline("avg_num_turns", m["avg_num_turns"], ci.low, ci.high, unit=" turns",
                            n=len(ok), ci_method=ci.method, chance=chance)
    frame = pd.DataFrame({"metric": [f"{k} *" if k == "avg_num_turns" else k
                                     for k in METRIC_NAMES],
                          "value": [m.get(k) for k in METRIC_NAMES],
                          "95% interval": [_interval(ci) if k == "avg_num_turns" else ""
                                           for k in METRIC_NAMES]})
    out.add_table("metrics", frame, f"Already Said That {variant} ({len(ok)} samples, "
                  f"{solver} solver, at most {top} turns)", index=False, by_row=True,
                  row_digits=TURN_ROWS, keys=("metric",))
    out.notes.append("* headline. Legend: " + "; ".join(
        f"{k}: {v}" for k, v in DEFINITIONS.items()) + "; stddev/median/max/min: over chats. "
        f"Interval: {ci.method}, within [0, {top}] turns. Chance {chance:.2f} turns: a uniform "
        "yes/no guess survives each main turn with p = 1/2, so E[turns] = 1 − 2^−max_turns; "
        "distractor turns never end a chat (their answers count only in "
        "avg_distractor_accuracy)")
    tokens = token_use(ok, solver)
    out.detail["tokens"] = tokens
    rows = [(k.replace("_", " "), v) for k, v in tokens.items() if k != "solver"]
    out.add_table("tokens", pd.DataFrame({"": [k for k, _ in rows],
                                          solver: [v for _, v in rows]}),
                  f"token use, {solver} solver (input = prompt, output = completion tokens)",
                  index=False, by_row=True, keys=("",))
    by_call = token_use_by_call(ok)
    if by_call:
        out.detail["tokens_by_call"] = by_call
        kinds = [k for k in ("reason", "answer") if k in by_call]
        out.add_table("tokens_by_call", pd.DataFrame(
            {"call": kinds, **{k.replace("_", " "): [by_call[c][k] for c in kinds]
                               for k in ("requests", "prompt_tokens", "completion_tokens")}}),
            f"token use per call kind, {solver} solver", index=False, keys=("call",))
    if tokens["turns_cut_off_in_thinking"]:
        out.warnings.append(
            f"{tokens['turns_cut_off_in_thinking']} turn(s) were cut off while the model was "
            "still thinking (no answer): give --max-tokens more room")
    cut = [r for r in ok if r.get("end") == "does_not_fit"]
    if cut:
        out.detail["chats_cut_by_context_window"] = len(cut)
        out.notes.append(
            f"does not fit: {len(cut)} of {len(ok)} chats ended when their next turn could not "
            "fit the model's context window (not sent); the turns they played count as "
            "survived, as a chat cut by --max-turns does (the model made no mistake in them)")
    violations = m.get("violation_rate") or 0.0
    # chats that ended on a reply in neither answer form: the invalid answers of this task
    out.invalid = (sum(1 for r in ok if r.get("violation_occurred")), len(ok))
    if violations > 0.5:
        out.warnings.append(
            f"{violations:.0%} of chats ended on a reply that was not `[answer: yes]`/`[answer: "
            "no]` (nor a distractor answer): the model mostly did not follow the answer format")
    return out


def chance_turns(max_turns: int) -> float:
    """Expected turns survived by a uniform yes/no guess: Σ_{t=1..T} 2^−t = 1 − 2^−T (the
    scoring ends a chat at the first wrong main answer; distractors never end it)."""
    return 1.0 - 2.0 ** -max_turns


def _interval(ci: Any) -> str:
    from mindprobe.core.numbers import interval

    return "" if ci.low is None else interval(ci.low, ci.high, 1)  # turns: one decimal


#: Variant names short enough for five side by side within 80 columns (legend below).
VARIANT_SHORT = {"which-is-heavier": "heavier", "first-letters": "letters",
                 "ambiguous-sentences": "ambig", "reverse-sort-words-eng": "reverse",
                 "distractorless": "no-distr"}


def side_by_side(by_variant: dict[str, Results]) -> Results:
    out = Results("already_said_that")
    token_rows = ("prompt_tokens", "completion_tokens", "total_tokens",
                  "completion_tokens_per_turn")
    cols = {v: [r.detail.get(k) for k in [*METRIC_NAMES, "n_samples"]]
            + [(r.detail.get("tokens") or {}).get(k) for k in token_rows]
            for v, r in by_variant.items()}
    names = [f"{k} *" if k == "avg_num_turns" else k for k in METRIC_NAMES]
    frame = pd.DataFrame({"metric": [*names, "n_samples", *token_rows], **cols})
    used = [k for k in token_rows if any(v for c in cols.values() for v in c[-len(token_rows):])]
    if not used:  # a baseline without tokens: the rows would only say 0
        frame = frame[~frame["metric"].isin(token_rows)].reset_index(drop=True)
    out.add_table("all_variants", frame, "Already Said That, all variants (* headline)",
                  index=False, by_row=True, row_digits=TURN_ROWS,
                  short={v: VARIANT_SHORT.get(v, v) for v in by_variant})
    out.notes.append("* headline: avg_num_turns; legend of the metrics: " + "; ".join(
        f"{k}: {v}" for k, v in DEFINITIONS.items() if k != "avg_num_turns"))
    for r in by_variant.values():
        out.warnings += r.warnings
    return out


# -- plots (the report) ----------------------------------------------------------------------------
def plots(runs: Sequence[Run], results: Sequence[Results | None]) -> list[str]:
    """Survival curves per variant (models as lines) and turns survived per variant (bars)."""
    out = []
    settings = by_setting(runs, results)
    models = list(dict.fromkeys(r.model_label for r in runs))
    variants = list(settings)
    bars = []
    for m in models:
        vals, lows, highs = [], [], []
        for v in variants:
            h = next((res.headline for run, res in settings[v] if run.model_label == m), None)
            vals.append(h.value if h else None)
            lows.append(h.ci_low if h else None)
            highs.append(h.ci_high if h else None)
        bars.append(Series(m, vals, lows, highs, color(m)))
    if any(ok(v) for s in bars for v in s.values):
        out.append(bar_chart(variants, bars, title="Already Said That: turns survived "
                             "(mean, 95% CI)", y_label="turns", x_label="distractor variant"))
    for v in variants:
        lines = []
        top = 0
        for run, _res in settings[v]:
            turns = [float(r["num_turns"]) for r in run.records
                     if "error" not in r and num(r.get("num_turns")) is not None]
            if not turns:
                continue
            max_turns = int(run.plan().options.max_turns)
            top = max(top, max_turns)
            xs, ys = survival(turns, max_turns)
            lines.append(Line(f"{run.model_label} (n={len(turns)})", xs, ys,
                              color(run.model_label)))
        if lines:
            out.append(line_chart(lines, title=f"Already Said That {v}: share of chats still "
                                  "going at turn t", x_label="turn t", y_label="chats going",
                                  y_range=(0, 1), x_range=(0, top), step=True, percent=True))
    return out
