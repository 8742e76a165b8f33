"""Seeded, stratified subsets: a smaller run that keeps every stratum's share.

A benchmark names the strata (problem family, question type, condition, ...); this module knows
none of them. `allocate` splits `n` by largest remainder; `stratified_sample` draws in an order
that does not depend on `n`, so a larger sample extends a smaller one.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

T = TypeVar("T")


def allocate(sizes: dict[Hashable, int], n: int) -> dict[Hashable, int]:
    """How many of `n` each stratum gets: proportional to its size, largest remainders first,
    never more than it holds."""
    total = sum(sizes.values())
    if n >= total:
        return dict(sizes)
    exact = {k: n * s / total for k, s in sizes.items()}
    out = {k: int(v) for k, v in exact.items()}
    rest = n - sum(out.values())
    for k in sorted(exact, key=lambda k: (out[k] - exact[k], str(k)))[:rest]:
        out[k] += 1
    return out


def stratified_sample(items: Sequence[T], stratum: Callable[[T], Hashable], n: int,
                      seed: int) -> list[T]:
    """`n` items drawn without replacement, seeded, proportionally from each stratum; the
    chosen items keep their original order (so a run's item order stays the file's).

    Each stratum's items are shuffled once (seeded); the next item always comes from the
    stratum with the smallest share of itself taken so far (ties: in the strata's order). The
    order of picks does not depend on `n`, so a larger sample holds every item of a smaller
    one (a run extended to it keeps what it recorded), every stratum gets an item before any
    gets a second, and each stays within one item of its proportional share."""
    groups: dict[Hashable, list[int]] = {}
    for i, it in enumerate(items):
        groups.setdefault(stratum(it), []).append(i)
    rng = random.Random(seed)
    keys = sorted(groups, key=str)
    for key in keys:
        rng.shuffle(groups[key])
    taken = dict.fromkeys(keys, 0)
    chosen: list[int] = []
    for _ in range(min(n, len(items))):
        key = min((k for k in keys if taken[k] < len(groups[k])),
                  key=lambda k: taken[k] / len(groups[k]))
        chosen.append(groups[key][taken[key]])
        taken[key] += 1
    return [items[i] for i in sorted(chosen)]
