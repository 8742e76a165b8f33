"""The trials a run asks: read from a test set, grouped by tuple under its analysis cell, and
sampled as whole tuples with the cells balanced (apart from the task so it can be tested alone)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from mindprobe.benchmarks.worldsense.data import deobfuscate
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
        shuffle(random.Random(seed), order)
        return trials.load(trials.keys[i] for i in order)
    cells: dict[Any, list[int]] = {}
    for i, key in enumerate(trials.keys):  # by cell, then each cell's tuples sorted by id:
        cells.setdefault(key[:-1], []).append(i)  # the order of sorting every key at once
    rng = random.Random(seed)
    for _, order in sorted(cells.items()):
        order.sort(key=lambda i: trials.keys[i][-1])
        shuffle(rng, order)
    # The cell with the fewest tuples taken, ties to the first by name and size, is a round
    # robin over the cells in that order, skipping those already exhausted.
    chosen, n, depth = [], 0, 0
    ordered = [cells[c] for c in sorted(cells)]
    while n < limit and ordered:
        for order in ordered:
            i = order[depth]
            chosen.append(trials.keys[i])
            n += trials.sizes[i]
            if n >= limit:
                break
        depth += 1
        ordered = [order for order in ordered if len(order) > depth]
    return trials.load(chosen)


def shuffle(rng: random.Random, x: list[Any]) -> None:
    """`rng.shuffle(x)`, the same permutation from the same draws, at about half its cost:
    CPython's Fisher–Yates with its `_randbelow` (rejection sampling on `getrandbits`)
    inlined, so a plan's 40,000 draws do not each pay two Python calls
    (`tests/worldsense/test_ws_loaders.py` holds it equal to `Random.shuffle`)."""
    bits = rng.getrandbits
    for i in range(len(x) - 1, 0, -1):
        k = (i + 1).bit_length()
        j = bits(k)
        while j > i:
            j = bits(k)
        x[i], x[j] = x[j], x[i]
