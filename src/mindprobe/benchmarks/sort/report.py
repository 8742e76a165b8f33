"""SORT results as tables: the headline (upstream's macro accuracy over conditions), micro
accuracy with Wilson CIs, breakdowns, label bias, and in-context vs no-context side by side
(the paper's key contrast) when runs of both are analysed together."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mindprobe.core.plan import RunPlan
from mindprobe.core.results import Headline, Results
from mindprobe.core.stats import Interval, chance_of, strata_interval
from mindprobe.report.plots import bars_from, frame_of
from mindprobe.report.svg import bar_chart

if TYPE_CHECKING:
    from mindprobe.core.store import Run

PERCENT = ("accuracy", "ci_low", "ci_high", "macro_accuracy", "macro_ci_low", "macro_ci_high",
           "share_A", "share_B", "share_X", "most_frequent_answer_share", "chance")
_DROP = ("model", "prompt", "context", "ci_method")
#: A uniform guess between the two labels, each right for one order (core's definition).
CHANCE = chance_of({"A": ["A"], "B": ["B"]})
#: Shown in JSON only: chance is stated once in the notes, counts beside their shares.
HIDDEN = ("n_conditions", "n_correct", "most_frequent_answer", "most_frequent_answer_share",
          "chance")
SHORT = {"share_A": "A", "share_B": "B", "share_X": "X", "excerpt_length": "excerpt",
         "segment_length": "segment", "present_seg1_first": "seg1 first",
         "distance_bin": "distance"}
#: What a row of each breakdown is, for trackers' metric names (a bin's edge in words varies
#: with the data; its index and the excerpt length do not).
BREAKDOWN_KEYS = {"distance_bin": ("excerpt_length", "bin_index"), "book": ("book_idx",)}


def results_of_records(records: list[dict[str, Any]], plan: RunPlan) -> Results:
    from mindprobe.benchmarks.sort.metrics import analyse

    out = Results("sort")
    ok = [r for r in records if "error" not in r]
    cfg, opts = plan.config, plan.options
    out.detail = {"n_rows": len(ok), "prompt": opts.prompt, "condition": opts.condition,
                  "task": opts.task, "split": opts.split, "scoring": opts.scoring,
                  "skipped_conditions": cfg.get("skipped") or []}
    if not ok:
        out.warnings.append("no finished rows to analyse")
        return out
    m = analyse(ok)
    top = m.overall.iloc[0]
    ci = macro_interval(ok)
    out.headline = Headline("accuracy (macro over conditions)", float(top["macro_accuracy"]),
                            ci.low, ci.high, chance=CHANCE, n=len(ok), ci_method=ci.method,
                            percent=True, majority=majority_share(ok))
    out.detail.update(macro_accuracy=float(top["macro_accuracy"]),
                      macro_ci=[ci.low, ci.high], macro_ci_method=ci.method,
                      micro_accuracy=float(top["accuracy"]),
                      micro_ci=[float(top["ci_low"]), float(top["ci_high"])])
    view = {"percent": PERCENT, "index": False, "intervals": {"95% CI": ("ci_low", "ci_high")},
            "short": SHORT, "percent_in_title": True}
    overall = _clean(m.overall)
    at = list(overall.columns).index("macro_accuracy") + 1
    overall.insert(at, "macro_ci_low", ci.low)
    overall.insert(at + 1, "macro_ci_high", ci.high)
    out.add_table("overall", overall, f"SORT {opts.condition} · {opts.prompt} · task "
                  f"{opts.task} · {len(ok)} rows (%; macro accuracy with a stratified "
                  "bootstrap 95% CI, micro with Wilson's)", hidden=HIDDEN,
                  **{**view, "intervals": {"macro CI": ("macro_ci_low", "macro_ci_high"),
                                           "micro CI": ("ci_low", "ci_high")},
                     "short": {**SHORT, "macro_accuracy": "macro acc",
                               "accuracy": "micro acc"}})
    out.add_table("by_condition", _clean(m.by_condition), "accuracy by condition "
                  "(lengths in words; %)", hidden=("n_correct",),
                  keys=("excerpt_length", "segment_length"), **view)
    for name in ("distance_bin", "book"):
        if name in m.breakdowns:
            out.add_table(name, _clean(m.breakdowns[name]),
                          f"accuracy by {name.replace('_', ' ')} (%)", hidden=("n_correct",),
                          keys=BREAKDOWN_KEYS[name], **view)
    if m.label_bias is not None:
        out.add_table("label_bias", _clean(m.label_bias), "answers given (%; upstream's "
                      "'percentageA': JSON)",
                      hidden=HIDDEN, keys=("present_seg1_first",), **view)
    if m.context_comparison is not None:
        _add_context(out, m.context_comparison)
    out.notes.append(baseline_line(ok))
    x = sum(1 for r in ok if r.get("answer") == "X")
    out.invalid = (x, len(ok))
    out.invalid_kinds = invalid_kinds(ok)
    missing = sum(1 for r in ok if r.get("logprobs_missing"))
    if x:
        why = ("the reply names neither label" if opts.scoring == "text" else
               "neither label among the top-20 tokens"
               + (f"; the backend returned no log-probs for {missing}" if missing else ""))
        out.warnings.append(f"{x} of {len(ok)} rows have no answer (X: {why}); X counts as "
                            "wrong")
    out.notes.append(f"macro accuracy (the headline): 95% CI {ci.method}; the micro "
                     "accuracy and each condition carry Wilson 95% CIs")
    if opts.scoring == "text":
        out.notes.append("scored by parsing the reply text (--scoring text), not by "
                         "log-probabilities as upstream")
    for s in cfg.get("skipped") or []:
        out.notes.append(f"condition skipped: {s}")
    return out


def memory_results(runs: list[Any]) -> Results | None:
    """The memory-conditions table over several runs (None unless two conditions are there);
    a long-term run is set beside the model it names with --base-model."""
    from mindprobe.benchmarks.sort.metrics import context_comparison
    from mindprobe.benchmarks.sort.paired import labelled_records

    records = [r for run in runs for r in labelled_records(run) if "error" not in r]
    table = context_comparison(records) if records else None
    if table is None:
        return None
    out = Results("sort")
    _add_context(out, table)
    return out


def _add_context(out: Results, cc: Any) -> None:
    ctxs = [c[len("accuracy_"):] for c in cc.columns if c.startswith("accuracy_")]
    out.add_table("context", cc, "memory conditions side by side (in-context, retrieval, "
                  "no-context, long-term = fine-tuned on the books, shown under its base "
                  "model): accuracy with Wilson 95% CI",
                  percent=tuple(c for c in cc.columns if c.startswith(
                      ("accuracy_", "ci_low_", "ci_high_", "difference", "long_term_gain"))),
                  index=False, keys=("excerpt_length", "segment_length"),
                  intervals={f"CI {c.replace('_', ' ')}": (f"ci_low_{c}", f"ci_high_{c}")
                             for c in ctxs if f"ci_low_{c}" in cc.columns},
                  short={**SHORT, **{f"accuracy_{c}": c.replace("_", " ") for c in ctxs},
                         **{f"n_{c}": f"n {c.replace('_', ' ')}" for c in ctxs}})


def invalid_kinds(ok: list[dict[str, Any]]) -> dict[str, int]:
    """Why rows have no answer (X): a reply naming both labels or neither (text scoring), or
    neither label among the top-20 tokens (log-prob scoring)."""
    kinds: dict[str, int] = {}
    for r in ok:
        if r.get("answer") != "X":
            continue
        raw = str(r.get("raw_answer") or "")
        kind = ("neither label in the top-20" if r.get("method") == "logprobs" else
                "both labels" if "A" in raw and "B" in raw else "neither label")
        kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


def conditions(rows: list[dict[str, Any]]) -> dict[tuple[Any, Any], list[float]]:
    """Each condition's (excerpt length × segment length) right/wrong values, in order."""
    out: dict[tuple[Any, Any], list[float]] = {}
    for r in rows:
        out.setdefault((r["excerpt_length"], r["segment_length"]), []).append(
            float(bool(r.get("correct"))))
    return dict(sorted(out.items()))


def macro_interval(records: list[dict[str, Any]]) -> Interval:
    """The macro accuracy's 95% interval: each condition resampled on its own (Wilson's for
    a single condition, where macro = micro)."""
    return strata_interval(list(conditions(records).values()))


def majority_share(ok: list[dict[str, Any]]) -> float | None:
    """The share of rows whose right label is the more frequent one (always answering it)."""
    from mindprobe.core.stats import majority_baseline

    return majority_baseline([t for t in (_truth(r) for r in ok) if t])[1]


def baseline_line(ok: list[dict[str, Any]]) -> str:
    """Chance, the majority-answer baseline and the answers given, in one line: a share such as
    70.8% may be no more than a constant answer's score."""
    from mindprobe.core.stats import answer_distribution, majority_baseline

    truth = [_truth(r) for r in ok]
    label, share = majority_baseline([t for t in truth if t])
    chance = CHANCE
    given = answer_distribution([str(r.get("answer")) for r in ok], ("A", "B", "X"))
    dist = ", ".join(f"{k} {100 * v:.1f}%" for k, v in given.items())
    major = "–" if share is None else f"{100 * share:.1f}% (always {label})"
    return (f"chance {100 * chance:.1f}% (a uniform guess between A and B); majority-answer "
            f"baseline {major}; answers given: {dist}")


def _truth(rec: dict[str, Any]) -> str | None:
    """The right label of a row: A when the first-shown segment came first in the book."""
    if "ground_truth" in rec and rec["ground_truth"] in ("A", "B"):
        return str(rec["ground_truth"])
    if rec.get("answer") in ("A", "B") and rec.get("correct") is not None:
        return rec["answer"] if rec["correct"] else ("B" if rec["answer"] == "A" else "A")
    return None


def _clean(frame: Any) -> Any:
    """Without the run keys when one value stands for all rows (one run); several runs keep
    them, so each row says whose it is."""
    return frame.drop(columns=[c for c in _DROP if c in frame.columns and (
        c == "ci_method" or frame[c].nunique(dropna=False) <= 1)])


# -- plots (the report) ----------------------------------------------------------------------------
def plots(runs: Sequence[Run], results: Sequence[Results | None]) -> list[str]:
    """Accuracy by condition (excerpt × segment length) and by distance bin, one bar per model
    and context (in-context / no-context / retrieval: the paper's key contrast), chance 50%."""
    settings: dict[str, list[str]] = {}
    by_cond: dict[str, list[dict[str, Any]]] = {}
    by_bin: dict[str, list[dict[str, Any]]] = {}
    for run, res in zip(runs, results, strict=True):
        if res is None:
            continue
        context = run.plan().options.condition
        key = f"{run.model_label} · {context}"
        for name, sink in (("by_condition", by_cond), ("distance_bin", by_bin)):
            t = res.tables.get(name)
            if t is not None:
                sink.setdefault(key, []).extend(frame_of(t).to_dict("records"))
    out = []
    if by_cond:
        cats, series = bars_from(by_cond, lambda r: f"{r['excerpt_length']}-{r['segment_length']}",
                                  "accuracy", 100.0, settings)
        out.append(bar_chart(cats, series, y_range=(0, 100), y_label="accuracy %",
                             x_label="excerpt-segment length (words)", refs=[(50.0, "chance")],
                             title="SORT accuracy by condition, in-context vs no-context (95% CI)"))
    if by_bin:
        cats, series = bars_from(by_bin, lambda r: f"{r['excerpt_length']}: {r['distance_bin']}",
                                  "accuracy", 100.0, settings)
        out.append(bar_chart(cats, series, y_range=(0, 100), y_label="accuracy %",
                             x_label="excerpt length: distance bin (words)",
                             refs=[(50.0, "chance")],
                             title="SORT accuracy by distance between the segments (95% CI)"))
    return out
