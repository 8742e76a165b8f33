"""SORT metrics (spec §4.4): upstream's macro headline plus micro accuracy with Wilson CIs.

Per-row records (dicts or a DataFrame) carry:

* required: ``excerpt_length`` (L_E), ``segment_length`` (L_S), ``answer`` (A/B/X),
  ``correct`` (bool or 0/1);
* optional: ``book_idx``, ``distance_bin`` (right bin edge), ``bin_index`` (0–3; derived from
  distance_bin when absent), ``present_seg1_first``, ``ground_truth``, and run keys
  ``context`` (``in-context`` / ``retrieval`` / ``no-context`` / ``long-term``), ``model``,
  ``prompt``.

Upstream's headline ``accuracy`` is a macro mean over conditions (one results file per
L_E×L_S); its ``percentageA`` is really the share of the most frequent answer, reported here
as ``most_frequent_answer_share`` next to the true ``share_A``. Chance is 0.5 by design.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from mindprobe.benchmarks.sort.cell import distance_edges
from mindprobe.core.stats import wilson_interval
from mindprobe.errors import DataError

CHANCE = 0.5
CI_METHOD = "wilson"
REQUIRED = ("excerpt_length", "segment_length", "answer", "correct")
RUN_KEYS = ("model", "prompt", "context")
IN_CONTEXT, NO_CONTEXT, LONG_TERM = "in-context", "no-context", "long-term"
#: The paper's memory conditions in the order tables show them.
CONTEXT_ORDER = (IN_CONTEXT, "retrieval", NO_CONTEXT, LONG_TERM)


def to_frame(records: pd.DataFrame | Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Validated copy with ``correct`` as bool and ``bin_index`` filled in when derivable."""
    df = records.copy() if isinstance(records, pd.DataFrame) else pd.DataFrame(list(records))
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise DataError(f"SORT records lack field(s) {missing}; have {list(df.columns)}")
    df["correct"] = df["correct"].astype(bool)
    if "bin_index" not in df.columns and "distance_bin" in df.columns:
        def index_of(row: pd.Series) -> int:
            labels = distance_edges(int(row.excerpt_length), int(row.segment_length))[1:]
            return labels.index(row.distance_bin) if row.distance_bin in labels else -1
        keys = df[["excerpt_length", "segment_length", "distance_bin"]].drop_duplicates()
        keys["bin_index"] = [index_of(r) for r in keys.itertuples()]
        df = df.merge(keys, on=["excerpt_length", "segment_length", "distance_bin"],
                      how="left")
    return df


def _run_keys(df: pd.DataFrame) -> list[str]:
    return [k for k in RUN_KEYS if k in df.columns]


def accuracy_table(records: pd.DataFrame | Iterable[Mapping[str, Any]],
                   by: Sequence[str] = ()) -> pd.DataFrame:
    """Micro accuracy per group: ``n``, ``n_correct``, ``accuracy``, Wilson ``ci_low/high``."""
    df = to_frame(records)
    keys = [*_run_keys(df), *[k for k in by if k not in RUN_KEYS]]
    if keys:
        grouped = df.groupby(keys, sort=True, dropna=False)["correct"]
        out = grouped.agg(n="size", n_correct="sum").reset_index()
    else:
        out = pd.DataFrame({"n": [len(df)], "n_correct": [int(df["correct"].sum())]})
    out["accuracy"] = out["n_correct"] / out["n"]
    out["ci_low"], out["ci_high"] = wilson_interval(out["n_correct"], out["n"])
    out["ci_method"] = CI_METHOD
    return out


def macro_accuracy(records: pd.DataFrame | Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Upstream's headline: mean over L_E×L_S conditions of each condition's accuracy."""
    per_condition = accuracy_table(records, ["excerpt_length", "segment_length"])
    keys = _run_keys(per_condition)
    if not keys:
        return pd.DataFrame({"n_conditions": [len(per_condition)],
                             "macro_accuracy": [per_condition["accuracy"].mean()]})
    return (per_condition.groupby(keys, sort=True, dropna=False)["accuracy"]
            .agg(n_conditions="size", macro_accuracy="mean").reset_index())


def label_bias(records: pd.DataFrame | Iterable[Mapping[str, Any]],
               by: Sequence[str] = ()) -> pd.DataFrame:
    """Answer shares: ``share_A``/``share_B``/``share_X`` and the most frequent answer's share.

    ``most_frequent_answer_share`` is what upstream calls ``percentageA``.
    """
    df = to_frame(records)
    keys = [*_run_keys(df), *[k for k in by if k not in RUN_KEYS]]
    groups = df.groupby(keys, sort=True, dropna=False) if keys else [((), df)]
    rows = []
    for key, part in groups:
        counts = part["answer"].value_counts()
        row = dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True))
        row["n"] = len(part)
        for label in ("A", "B", "X"):
            row[f"share_{label}"] = counts.get(label, 0) / len(part)
        row["most_frequent_answer"] = counts.index[0]
        row["most_frequent_answer_share"] = counts.iloc[0] / len(part)
        rows.append(row)
    return pd.DataFrame(rows)


def overall(records: pd.DataFrame | Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per run: macro (headline) and micro accuracy, CI, label bias, chance."""
    df = to_frame(records)
    keys = _run_keys(df)
    micro = accuracy_table(df)
    macro = macro_accuracy(df)
    bias = label_bias(df)[[*keys, "share_A", "share_B", "share_X", "most_frequent_answer",
                           "most_frequent_answer_share"]]
    if keys:
        out = macro.merge(micro, on=keys).merge(bias, on=keys)
    else:
        out = pd.concat([macro, micro, bias], axis=1)
    out["chance"] = CHANCE
    first = [*keys, "n", "macro_accuracy", "accuracy", "ci_low", "ci_high", "ci_method"]
    return out[first + [c for c in out.columns if c not in first]]


def context_comparison(records: pd.DataFrame | Iterable[Mapping[str, Any]]
                       ) -> pd.DataFrame | None:
    """The memory conditions side by side per condition (excerpt × segment length): accuracy
    and Wilson CI of each context present (in-context, retrieval, no-context, long-term), plus
    ``difference`` (in-context − no-context) and ``long_term_gain`` (long-term − no-context)
    where both are there. None unless two contexts are present."""
    df = to_frame(records)
    if "context" not in df.columns:
        return None
    present = [c for c in CONTEXT_ORDER if c in set(df["context"])]
    if len(present) < 2:
        return None
    table = accuracy_table(df[df["context"].isin(present)],
                           ["excerpt_length", "segment_length"])
    keys = [k for k in _run_keys(table) if k != "context"]
    index = [*keys, "excerpt_length", "segment_length"]
    wide = table.pivot_table(index=index, columns="context",
                             values=["n", "accuracy", "ci_low", "ci_high"], aggfunc="first")
    order = {(m, c): (present.index(c), i) for i, m in enumerate(("accuracy", "ci_low",
                                                                  "ci_high", "n"))
             for c in present}
    wide = wide[sorted(wide.columns, key=lambda mc: order[mc])]
    wide.columns = [f"{metric}_{ctx.replace('-', '_')}" for metric, ctx in wide.columns]
    wide = wide.reset_index()
    if {IN_CONTEXT, NO_CONTEXT} <= set(present):
        wide["difference"] = wide["accuracy_in_context"] - wide["accuracy_no_context"]
    if {LONG_TERM, NO_CONTEXT} <= set(present):
        wide["long_term_gain"] = wide["accuracy_long_term"] - wide["accuracy_no_context"]
    return wide


@dataclass
class SortMetrics:
    """All SORT tables; ``context_comparison`` is None unless two contexts are present."""

    overall: pd.DataFrame
    by_condition: pd.DataFrame
    breakdowns: dict[str, pd.DataFrame] = field(default_factory=dict)
    label_bias: pd.DataFrame | None = None
    context_comparison: pd.DataFrame | None = None


BREAKDOWNS: dict[str, tuple[str, ...]] = {
    "excerpt_length": ("excerpt_length",),
    "segment_length": ("segment_length",),
    "distance_bin": ("excerpt_length", "bin_index", "distance_bin"),
    "bin_index": ("bin_index",),
    "book": ("book_idx",),
    "present_seg1_first": ("present_seg1_first",),
}


def analyse(records: pd.DataFrame | Iterable[Mapping[str, Any]]) -> SortMetrics:
    """Every table of §4.4 for the given per-row records."""
    df = to_frame(records)
    if df.empty:
        raise DataError("no SORT records to analyse")
    breakdowns = {name: accuracy_table(df, cols) for name, cols in BREAKDOWNS.items()
                  if all(c in df.columns for c in cols)}
    return SortMetrics(
        overall=overall(df),
        by_condition=accuracy_table(df, ["excerpt_length", "segment_length"]),
        breakdowns=breakdowns,
        label_bias=label_bias(df, ["present_seg1_first"] if "present_seg1_first" in df
                              else ()),
        context_comparison=context_comparison(df),
    )
