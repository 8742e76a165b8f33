"""Two SORT runs on the same rows, compared row by row: the fine-tuned model against its base
(the paper's long-term memory), or in-context against no-context.

Rows are matched by ``row_id``; each table gives both accuracies, the paired difference B − A
with a paired-bootstrap 95% interval, the discordant rows and McNemar's exact p-value. Books
held out of the fine-tuning corpus are the control: a gain there is not memory of the book
(it is the format, or the instruction data), so they are tabulated apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from mindprobe.benchmarks.sort.options import DEFAULT_HELD_OUT, SortOptions
from mindprobe.core.results import Headline, Results
from mindprobe.core.stats import N_BOOT, exact_mean, paired_difference
from mindprobe.errors import DataError, UsageError

LONG_TERM = "long-term"
METHOD = f"paired bootstrap 95% ({N_BOOT} resamples)"
_KEYS = ("excerpt_length", "segment_length", "book_idx", "distance_bin", "bin_index")
PERCENT = ("accuracy_a", "accuracy_b", "difference", "ci_low", "ci_high")
#: How the paired tables read (core/numbers.py): one interval column, short headers.
VIEW: dict[str, Any] = {"percent": PERCENT, "index": False, "hidden": ("bin_index",),
                        "intervals": {"95% CI": ("ci_low", "ci_high")},
                        "short": {"accuracy_a": "A", "accuracy_b": "B", "difference": "B − A",
                                  "only_a_right": "A only", "only_b_right": "B only",
                                  "p_mcnemar": "p", "excerpt_length": "excerpt",
                                  "distance_bin": "distance"}}
BREAKDOWNS: dict[str, tuple[str, ...]] = {
    "excerpt_length": ("excerpt_length",),
    "distance_bin": ("excerpt_length", "bin_index", "distance_bin"),
    "book": ("book_idx",),
}


def _options(run: Any) -> SortOptions:
    """The typed options a run was made with (rebuilt from its manifest)."""
    return run.plan().options


def run_label(run: Any) -> str:
    """``model · condition``: what a run is called in paired and side-by-side tables."""
    return f"{run.model_label} · {_options(run).condition}"


def labelled_records(run: Any) -> list[dict[str, Any]]:
    """A run's records with ``model`` set for side-by-side tables: a long-term run is shown
    under the model it was fine-tuned from (``--base-model``) when it names one."""
    opts = _options(run)
    model = opts.base_model if opts.condition == LONG_TERM else None
    return [{**r, "model": model or run.model_label} for r in run.records]


def order_runs(runs: Sequence[Any]) -> tuple[Any, Any]:
    """(A, B) = (base, fine-tuned): the long-term run is B, else the order given."""
    a, b = runs
    if _condition(a) == LONG_TERM and _condition(b) != LONG_TERM:
        a, b = b, a
    return a, b


def _condition(run: Any) -> str:
    return _options(run).condition


def held_out_of(a: Any, b: Any, given: list[int] | None) -> list[int]:
    """The control books: as given, else as the long-term run recorded, else none."""
    if given is not None:
        return given
    for run in (b, a):
        if _condition(run) == LONG_TERM:
            cfg = run.manifest.get("config") or {}
            return list(cfg.get("held_out") or [int(DEFAULT_HELD_OUT)])
    return []


def paired_frame(a_records: list[dict[str, Any]], b_records: list[dict[str, Any]]
                 ) -> pd.DataFrame:
    """One row per row_id answered (without error) in both runs: its keys and both outcomes."""
    def frame(records: list[dict[str, Any]], side: str) -> pd.DataFrame:
        ok = [r for r in records if "error" not in r and "row_id" in r]
        cols = ["row_id", *[k for k in _KEYS if ok and k in ok[0]]]
        df = pd.DataFrame([{**{k: r.get(k) for k in cols}, f"correct_{side}":
                            bool(r.get("correct"))} for r in ok], columns=[*cols,
                                                                            f"correct_{side}"])
        return df.drop_duplicates("row_id")
    fa, fb = frame(a_records, "a"), frame(b_records, "b")
    both = fa.merge(fb[["row_id", "correct_b"]], on="row_id", how="inner")
    if both.empty:
        raise DataError("the two runs share no rows (row_id); a paired comparison needs the "
                        "same rows: run both with the same variant, --split, --books and "
                        "--limit/--excerpts")
    return both


def paired_table(df: pd.DataFrame, by: Sequence[str] = ()) -> pd.DataFrame:
    """Per group: n, accuracy of A and B, B − A with its bootstrap CI, discordant rows, p."""
    groups = df.groupby(list(by), sort=True) if by else [((), df)]
    rows = []
    for key, part in groups:
        a, b = part["correct_a"].to_numpy(), part["correct_b"].to_numpy()
        d = paired_difference(b.astype(float), a.astype(float))  # B − A
        row = dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True))
        row.update(n=d.n, accuracy_a=exact_mean(a), accuracy_b=exact_mean(b),
                   difference=d.diff, ci_low=d.low, ci_high=d.high,
                   only_a_right=int((a & ~b).sum()), only_b_right=int((~a & b).sum()),
                   p_mcnemar=d.p_value)
        rows.append(row)
    return pd.DataFrame(rows)


def paired_results(a: Any, b: Any, held_out: list[int] | None = None) -> Results:
    """The comparison of run B against run A (both `mindprobe.core.store.Run`)."""
    oa, ob = _options(a), _options(b)
    for key in ("prompt", "task", "scoring"):
        va, vb = getattr(oa, key), getattr(ob, key)
        if va != vb:
            raise UsageError(f"the runs differ in {key} ({va} vs {vb}): a paired comparison "
                             "needs the same prompts; rerun one of them")
    control = held_out_of(a, b, held_out)
    df = paired_frame(a.records, b.records)
    df["held_out"] = df["book_idx"].isin(control) if "book_idx" in df else False
    la, lb = run_label(a), run_label(b)
    out = Results("sort")
    trained, ctrl = df[~df["held_out"]], df[df["held_out"]]
    sets = [("all rows" if not control else "trained books", trained)]
    if control:
        sets.append((f"held-out control ({', '.join(map(str, control))})", ctrl))
    summary = pd.concat([paired_table(part).assign(rows=name) for name, part in sets
                         if len(part)], ignore_index=True)
    summary = summary[["rows", *[c for c in summary.columns if c != "rows"]]]
    head = paired_table(trained) if len(trained) else None
    if head is not None:
        h = head.iloc[0]
        out.headline = Headline(f"accuracy B − A ({'trained books' if control else 'paired'})",
                                float(h["difference"]), float(h["ci_low"]),
                                float(h["ci_high"]), n=int(h["n"]),
                                ci_method=METHOD, percent=True)
    what = f"A = {la}, B = {lb}"
    out.add_table("paired", summary, f"paired comparison on the same rows ({what}); "
                  f"B − A with a {METHOD} interval, exact McNemar test", **VIEW)
    for name, cols in BREAKDOWNS.items():
        if not all(c in df.columns for c in cols):
            continue
        if name == "book":  # every book, the control ones marked
            t = paired_table(df, cols)
            t.insert(1, "held_out", t["book_idx"].isin(control))
            out.add_table("paired_by_book", t, "B − A by book (held_out: the control)",
                          **VIEW)
            continue
        for suffix, part in (("", trained), ("_control", ctrl)):
            if len(part):
                out.add_table(f"paired_by_{name}{suffix}", paired_table(part, cols),
                              f"B − A by {name.replace('_', ' ')}"
                              + (" — held-out control books" if suffix else ""), **VIEW)
    out.detail = {"a": {"run": str(a.dir), "label": la}, "b": {"run": str(b.dir), "label": lb},
                  "n_paired": len(df), "held_out": control,
                  "unpaired": {"a": len(a.records) - len(df), "b": len(b.records) - len(df)}}
    if control and not len(ctrl):
        out.warnings.append(f"no rows of the held-out book(s) {control}: the control is "
                            "missing; include them (--books) to tell memory from format")
    dropped = [(lab, n) for lab, n in ((la, len(a.records) - len(df)),
                                       (lb, len(b.records) - len(df))) if n]
    for lab, n in dropped:
        out.notes.append(f"{n} row(s) of {lab} have no partner in the other run and are left "
                         "out")
    return out
