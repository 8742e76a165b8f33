"""Seeded, stratified subsets: a smaller run that keeps every stratum's share.

A benchmark names the strata (problem family, question type, condition, ...); this module knows
none of them. Proportional allocation by largest remainder, so the sizes add up to exactly `n`
and every stratum with at least one item in the full set keeps one when `n` allows it.
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
    chosen items keep their original order (so a run's item order stays the file's)."""
    groups: dict[Hashable, list[int]] = {}
    for i, it in enumerate(items):
        groups.setdefault(stratum(it), []).append(i)
    quota = allocate({k: len(v) for k, v in groups.items()}, n)
    rng = random.Random(seed)
    chosen: list[int] = []
    for key in sorted(groups, key=str):
        chosen += rng.sample(groups[key], quota[key])
    return [items[i] for i in sorted(chosen)]
