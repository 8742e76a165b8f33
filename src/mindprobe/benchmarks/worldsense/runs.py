"""WorldSense results of a mindprobe run: the paper's scores of its records (`run_scores`,
held equal to the analysis of upstream's results files), as tables of rows, so a run imports
no pandas; `frames` gives the DataFrames that analysis takes (`verbs.py`)."""

from __future__ import annotations

from operator import itemgetter
from typing import TYPE_CHECKING, Any

from mindprobe.benchmarks.worldsense.baselines import CHANCE_DEFINITION, chance_table
from mindprobe.benchmarks.worldsense.run_scores import UPSTREAM, accuracy_interval, score_run
from mindprobe.core.results import Headline, Results

if TYPE_CHECKING:
    import pandas as pd


def frames(records: list[dict[str, Any]], prompting: str, label: str
           ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(trials, results) tables of a run's records (errored records excluded by the caller),
    in Key order: records arrive in the order items finished, which concurrency changes, and
    pandas' group sums are order-sensitive in their last digit."""
    import pandas as pd

    from mindprobe.benchmarks.worldsense.metrics import JOIN_FIELDS
    from mindprobe.benchmarks.worldsense.upstream import results_from_pairs

    records = sorted(records, key=lambda r: int(r["Key"]))
    cols = [c for c in JOIN_FIELDS if records and c in records[0]]
    # column by column: a third of the time of a frame built from one dict per record
    trials = pd.DataFrame(dict(zip(cols, _columns(records, cols), strict=True)),
                          columns=cols or list(JOIN_FIELDS))
    results = results_from_pairs(((int(r["Key"]), r["resp"]) for r in records), prompting, label)
    return trials, results


def _columns(records: list[dict[str, Any]], cols: list[str]) -> list[list[Any]]:
    """The values of `cols` in every record, column by column (None where one is missing)."""
    if len(cols) < 2:
        return [[r.get(c) for r in records] for c in cols]
    try:
        rows = list(map(itemgetter(*cols), records))  # one C call per record
    except KeyError:  # a record without some field (written by an older version)
        rows = [tuple(r.get(c) for c in cols) for r in records]
    return [list(col) for col in zip(*rows, strict=True)] if rows else [[] for _ in cols]


def results_of_run(records: list[dict[str, Any]], prompting: str, label: str) -> Results:
    """Accuracy and bias per problem with upstream's 95% CIs; invalid answers counted, and
    replies cut off while the model was still thinking counted apart (both score as "")."""
    out = Results("worldsense")
    ok = sorted((r for r in records if "error" not in r), key=lambda r: int(r["Key"]))
    counts = _counts(ok)
    _, _, invalid, cut = counts.get("ALL", (0, 0, 0, 0))
    out.invalid = (invalid, len(ok))
    out.detail = {"n_trials": len(ok), "n_invalid": invalid, "n_truncated_in_reasoning": cut,
                  "accuracy": {}, "bias": {}}
    if not ok:
        out.warnings.append("no finished trials to analyse")
        return out
    warnings: list[str] = []
    doc = score_run(ok, prompting, label, warnings.append)
    out.detail.update(doc)
    out.warnings += [w for w in warnings if "PARTIAL" not in w]
    small = no_bias_ci = False
    chance = chance_table(ok)
    out.detail["chance"] = chance
    for run, problems in doc["accuracy"].items():
        bias = doc["bias"].get(run, {})
        rows = []
        for name, s in problems.items():
            n, k, n_bad, n_cut = counts.get(name, (0, 0, 0, 0))
            lo, hi, method = accuracy_interval(s.get("mean"), s.get("conf95"), k, n)
            small |= method != UPSTREAM
            row_cut = {"cut off thinking": n_cut} if cut else {}
            rows.append({"problem": name, "n": n, "invalid": n_bad, **row_cut,
                         "accuracy": _pct(s.get("mean")),
                         "ci_low": _pct(lo), "ci_high": _pct(hi), "ci": method,
                         "bias": bias.get(name, {}).get("mean"),
                         "bias ±95": _half_width(bias.get(name, {}).get("conf95"))})
            no_bias_ci |= rows[-1]["bias ±95"] is None
        wilson_rows = [row["problem"] for row in rows if row["ci"] != UPSTREAM]
        out.add_table(f"accuracy/{run}", rows,
                      f"WorldSense {run} ({len(ok)} trials, {invalid} invalid answers"
                      + (f", {cut} cut off while thinking" if cut else "")
                      + "; accuracy in %, upstream's 95% CI"
                      + (f" except Wilson's for {', '.join(wilson_rows)}" if wilson_rows
                         else "") + ")", index=False,
                      intervals={"95% CI": ("ci_low", "ci_high")}, hidden=("ci",),
                      short={"invalid": "inv", "bias ±95": "±95"},
                      digits={"accuracy": 1, "ci_low": 1, "ci_high": 1, "bias": 2,
                              "bias ±95": 2}, percent_in_title=True,
                      keys=("problem",), tracked_as=f"accuracy/{prompting}")
    run = doc["accuracy"].get(f"{prompting}/{label}", {})
    head = run.get("ALL") or next(iter(run.values()), None)
    if head is not None and head.get("mean") is not None:
        n, k, _, _ = counts.get("ALL", (0, 0, 0, 0))
        lo, hi, method = accuracy_interval(head["mean"], head.get("conf95"), k, n)
        out.headline = Headline("accuracy", head["mean"], lo, hi, n=len(ok), ci_method=method,
                                chance=chance.get("ALL", {}).get("chance"), percent=True,
                                majority=chance.get("ALL", {}).get("majority_baseline"))
    if small:
        out.notes.append(
            "upstream's CI: mean ± 1.96 × the SEM of equally weighted cells (the paper's); "
            "where a cell is too small for that (a single tuple per cell: no SEM, or zero "
            "width), the interval is Wilson's around the accuracy shown over the problem's "
            "trials, named in the title (JSON: `ci` per row)")
    if no_bias_ci:
        out.notes.append("bias ±95 is – where the tuples show no spread (one tuple, or all "
                         "alike): no interval can be given there")
    out.notes.append(CHANCE_DEFINITION + "; const best = the accuracy of the best constant "
                     "answer (the majority-answer baseline)")
    order = list(next(iter(doc["accuracy"].values()), {})) or list(chance)
    base = [{"problem": name, "chance": chance[name]["chance"],
             "bias at chance": chance[name]["bias_at_chance"],
             "const best": chance[name]["majority_baseline"],
             "answer": chance[name]["majority_answer"]} for name in order if name in chance]
    out.add_table("chance", base, "chance and the best constant answer per "
                  "problem (%; bias as defined below)", index=False,
                  percent=("chance", "const best"), digits={"bias at chance": 2},
                  short={"bias at chance": "chance bias"}, percent_in_title=True)
    options = list(dict.fromkeys(k for c in chance.values() for k in c["answers"]))
    answers = [{"problem": name, **{o: chance[name]["answers"].get(o) for o in options}}
               for name in order if name in chance]
    out.add_table("answers", answers, "answers given, % of each problem's trials", index=False,
                  percent=tuple(options), short={"POSSIBLE": "POSS", "IMPOSSIBLE": "IMPOSS",
                                                 "invalid": "inv"}, percent_in_title=True)
    if cut:
        out.warnings.append(
            f"{cut} of {len(ok)} replies were cut off while the model was still thinking (no "
            "answer; scored as empty, like an invalid answer, but not counted as one): give "
            "--max-tokens more room")
    if invalid:
        share = invalid / len(ok)
        msg = f"{invalid} of {len(ok)} answers ({share:.0%}) were not one of the allowed options"
        hint = ("; the model mostly did not answer in the expected form (try --scoring "
                "logprob" + (")" if prompting == "constrained" else
                             " or --prompting constrained)"))
        (out.warnings if share > 0.5 else out.notes).append(msg + (hint if share > 0.5 else ""))
    return out


def _counts(records: list[dict[str, Any]]) -> dict[str, tuple[int, int, int, int]]:
    """problem -> (trials, correct, invalid, cut off while thinking), and "ALL"."""
    out: dict[str, list[int]] = {}
    for r in records:
        key = r.get("problemname")
        c = out.get(key)
        if c is None:
            c = out[key] = [0, 0, 0, 0]
        c[0] += 1
        if r.get("correct"):
            c[1] += 1
        if r.get("truncated_in_reasoning"):
            c[3] += 1
        elif not r.get("resp"):
            c[2] += 1
    counts = {k: (v[0], v[1], v[2], v[3]) for k, v in out.items()}
    if out:
        total = [sum(col) for col in zip(*out.values(), strict=True)]
        counts["ALL"] = (total[0], total[1], total[2], total[3])
    return counts


def _half_width(half: Any) -> float | None:
    """A CI half-width, or None (shown "–") where it is undefined or zero: one tuple, or
    tuples all alike, say nothing about the spread, and "± 0" would claim certainty."""
    return float(half) if half is not None and half == half and half > 0 else None


def _pct(v: Any) -> float | None:
    return None if v is None else 100 * float(v)
