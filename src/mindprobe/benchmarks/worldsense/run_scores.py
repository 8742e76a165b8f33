"""WorldSense's scoring (spec §3.2–§3.5) of one run's records, without pandas: the summary
`report` makes of `metrics.analyse` for them, number for number, from plain lists
(`core.cells`), so `mindprobe run` prints its tables without importing pandas (~0.45 s of a
small run's ~1 s). `metrics.py` stays the analysis of upstream's results files (many runs,
87,000 trials each); `tests/worldsense/test_ws_run_scores.py` holds the two equal.

Also here, for the same reason: the interval a table shows beside an accuracy, the spec's
label order, and the warning an incomplete tuple gives.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from mindprobe.benchmarks.worldsense.answers import _BIAS, _CLASS, _WEIGHT
from mindprobe.benchmarks.worldsense.data import MODEL_ORDER, PROBLEM_ORDER, PROMPTING_ORDER
from mindprobe.core import cells
from mindprobe.core.stats import wilson
from mindprobe.errors import DataError

INCOMPLETE_WARNING = ("!!! WARNING you have incomplete tuples in that dataframe !!! "
                      "(this is normal if you chose to load partial results)")

#: How an accuracy's interval was got (`accuracy_interval`).
UPSTREAM = "upstream"
WILSON = "Wilson"

_KNOWN_ORDER = {"problemname": PROBLEM_ORDER, "prompting": PROMPTING_ORDER,
                "modelname": MODEL_ORDER}


def label_sort_key(field: str, value: Any) -> tuple[int, Any]:
    """Spec order for known labels of ``field``, then everything else ascending."""
    known = _KNOWN_ORDER.get(field, ())
    return (0, known.index(value)) if value in known else (1, value)


def accuracy_interval(mean: float | None, half: float | None, k: int, n: int
                      ) -> tuple[float | None, float | None, str]:
    """Upstream's mean ± conf95 where it is defined and non-degenerate, else Wilson's interval
    around the accuracy shown (the paper's balanced one, with n trials; k/n, the raw share,
    only when there is none), so the interval always brackets the number beside it."""
    if mean is not None and half is not None and half == half and half > 0:
        # the bounds clipped to [0, 1], where the normal interval of a share may spill over
        return (max(0.0, float(mean) - float(half)), min(1.0, float(mean) + float(half)),
                UPSTREAM)
    lo, hi = wilson(float(mean) * n if mean is not None and mean == mean else k, n)
    return lo, hi, WILSON


def tuple_scores(records: Sequence[dict[str, Any]], warn: Callable[[str], None]
                 ) -> list[dict[str, Any]]:
    """One row per complete tuple (its problem, size, weighted accuracy and bias), tuples in
    the order their first trial comes: `metrics.compute_acc_table` for one run's records in
    Key order, the sums made in the same order (so the same floats)."""
    tuples: dict[Any, list[Any]] = {}
    for r in records:
        gold = r.get("goldresp")
        gold_class = _CLASS.get(gold) if isinstance(gold, str) else None
        if gold_class is None:
            raise DataError(f"unknown gold answer {gold!r}; the trial set is not a WorldSense "
                            "set")
        resp = r.get("resp")
        resp = None if resp is None else str(resp)
        weight = _WEIGHT[gold]
        correct = 1.0 if resp is not None and _CLASS.get(resp, -1) == gold_class else 0.0
        bias = _BIAS.get(resp, 0.0) if resp is not None else 0.0
        t = tuples.get(r.get("tuple_ID"))
        if t is None:  # [first trial, trials, Σ weight, Σ weight·correct, Σ weight·bias]
            t = tuples[r.get("tuple_ID")] = [r, 0, 0.0, 0.0, 0.0]
        t[1] += 1
        t[2] += weight
        t[3] += weight * correct
        t[4] += weight * bias
    rows = [{"problemname": first.get("problemname"), "problemsize": first.get("problemsize"),
             "acc": acc / w, "bias": bias / w}
            for first, n, w, acc, bias in tuples.values() if n == len(first["expectedresp"])]
    if len(rows) < len(tuples):
        warn(INCOMPLETE_WARNING)
    return rows


def score_run(records: Sequence[dict[str, Any]], prompting: str, label: str,
              warn: Callable[[str], None]) -> dict[str, Any]:
    """``{"accuracy"|"bias": {"<prompting>/<label>": {"ALL"|problem: {mean, conf95}}}}`` of
    a run's finished records (in Key order): upstream's per-tuple scores, cells of problem ×
    size, sizes then problems re-weighted equally (spec §3.5)."""
    keys = [int(r["Key"]) for r in records]
    if len(set(keys)) != len(keys):
        raise DataError("the trial set has duplicated Keys; re-fetch the test set")
    # the DataFrame's groups come in the order of the categories: problems as first seen
    seen = {p: i for i, p in enumerate(dict.fromkeys(r.get("problemname") for r in records))}

    def order(key: str, value: Any) -> Any:
        if key == "problemname":
            return seen[value]
        return (value is None or value != value, 0 if value is None else value)

    rows = tuple_scores(records, warn)
    run = f"{prompting}/{label}"
    doc: dict[str, Any] = {}
    for measure, column in (("accuracy", "acc"), ("bias", "bias")):
        by_problem = cells.with_sem(cells.regroup_equal(
            cells.cell_moments(rows, ("problemname", "problemsize"), column, order),
            ("problemname",), order))
        overall = cells.with_sem(cells.regroup_equal(by_problem, ()))
        out: dict[str, dict[str, Any]] = {}
        if overall:
            out[run] = {"ALL": _stat(overall[0])}
        for cell in sorted(by_problem,
                           key=lambda c: label_sort_key("problemname", c["problemname"])):
            out.setdefault(run, {})[cell["problemname"]] = _stat(cell)
        doc[measure] = out
    return doc


def _stat(cell: dict[str, Any]) -> dict[str, float | None]:
    return {name: None if cell[name] != cell[name] else float(cell[name])
            for name in ("mean", "conf95")}
