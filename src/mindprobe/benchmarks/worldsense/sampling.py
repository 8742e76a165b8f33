"""The trials a run asks: read from a test set, grouped by tuple under its analysis cell, and
sampled as whole tuples with the cells balanced (apart from the task so it can be tested alone)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from mindprobe.benchmarks.worldsense.generate import deobfuscate
from mindprobe.core.data import Grouped, read_jsonl_bz2


def read_trials(path: Path) -> list[dict[str, Any]]:
    """Trials of a test set with gold de-obfuscated; a malformed line names file:line."""

    def parse(t: dict[str, Any]) -> dict[str, Any]:
        t["goldresp"] = deobfuscate(t.pop("goldresp_obfusc"))
        t["Key"] = int(t["Key"])
        t["expectedresp"] = list(t["expectedresp"])
        _ = t["tuple_ID"], t["text"], t["problemname"]
        return t

    return read_jsonl_bz2(path, "trial", parse)


def tuple_of(trial: dict[str, Any]) -> Any:
    """A trial's tuple, as the file has it (sorted as such, so an int id sorts as a number),
    under its analysis cell (problem family, size), so a sample can be stratified by cell
    without decoding every trial."""
    return (str(trial.get("problemname") or ""), int(trial.get("problemsize") or 0),
            trial["tuple_ID"])


def sample_tuples(trials: Grouped, seed: int, limit: int | None) -> list[dict[str, Any]]:
    """Whole tuples, the same number from every analysis cell (problem family × size), about
    `limit` trials: each cell's tuples in a seeded shuffle of their ids, and the next tuple
    always from the cell with the fewest tuples taken, until `limit` is reached (the last tuple
    completed: the analysis drops incomplete tuples). The analysis weighs the cells equally
    and its SEM counts each cell as often as its smallest one (spec §3.5), so equal cells give
    the narrowest interval for the trials asked (`precision.py`); the sample overshoots by
    less than one tuple, a run stopped early is still balanced, and a larger `limit` extends a
    smaller one's sample. Only the chosen tuples are decoded."""
    if limit is None:  # every tuple, in a seeded shuffle of their ids
        order = sorted(range(len(trials.keys)), key=lambda i: trials.keys[i][-1])
        random.Random(seed).shuffle(order)
        return trials.load(trials.keys[i] for i in order)
    cells: dict[Any, list[int]] = {}
    for i in sorted(range(len(trials.keys)), key=trials.keys.__getitem__):
        cells.setdefault(trials.keys[i][:-1], []).append(i)
    rng = random.Random(seed)
    for _, order in sorted(cells.items()):
        rng.shuffle(order)
    taken = dict.fromkeys(cells, 0)
    chosen, n = [], 0
    while n < limit:
        open_ = [c for c in sorted(cells) if taken[c] < len(cells[c])]
        if not open_:
            break
        cell = min(open_, key=taken.__getitem__)  # ties: the first by name and size
        i = cells[cell][taken[cell]]
        taken[cell] += 1
        chosen.append(trials.keys[i])
        n += trials.sizes[i]
    return trials.load(chosen)
