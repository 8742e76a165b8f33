"""Relation-level world building for the WorldSense generator (spec §5.1–5.3), free of wording.

Entities are indices 0..n-1 and index = position in the hidden order, so truth in the hidden
world is arithmetic on indices. Only Compl.normal has several models; they are listed here
constructively (not by brute force, which the independent solver does).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from itertools import permutations

Rel = tuple[int, ...]


def adjacent_links(n: int) -> list[Rel]:
    return [(i, i + 1) for i in range(n - 1)]


def complete_description(n: int, complexity: int, rng: random.Random) -> list[Rel]:
    """n-1 shuffled relations that pin down the order (spec §5.2, Complexity_0/1/2)."""
    links = adjacent_links(n)
    if complexity == 0:
        rels = links
    elif complexity == 1:
        m = rng.randint(1, n - 2)
        dropped = (m - 1, m) if rng.random() < 0.5 else (m, m + 1)
        rels = [link for link in links if link != dropped] + [(m, m - 1, m + 1)]
    elif complexity == 2:
        rels = [(m, m - 1, m + 1) for m in range(1, n - 1)] + [rng.choice(links)]
    else:
        raise ValueError(f"complexity must be 0, 1 or 2, got {complexity}")
    rng.shuffle(rels)
    return rels


def true_relation(n: int, rng: random.Random) -> Rel:
    """A relation true in the hidden order with span >= 2: binary/ternary 50/50, span uniform."""
    span = rng.randint(2, n - 1)
    a = rng.randint(0, n - 1 - span)
    b = a + span
    if rng.random() < 0.5:
        return (a, b)
    return (rng.randint(a + 1, b - 1), a, b)


def negation(rel: Rel, rng: random.Random) -> Rel:
    """The false counterpart of a relation true in every model (spec §5.1)."""
    if len(rel) == 2:
        return (rel[1], rel[0])
    m, a, b = rel
    middle = rng.choice((a, b))
    outer = [m, b if middle == a else a]
    rng.shuffle(outer)
    return (middle, *outer)


def span(rel: Rel) -> int:
    """max - min of the relation's known entity indices (the absent entity -1 is ignored)."""
    known = [i for i in rel if i >= 0]
    return max(known) - min(known)


def holds(rel: Rel, rank: dict[int, int]) -> bool:
    """Truth of a relation in an order given as entity -> rank."""
    if len(rel) == 2:
        return rank[rel[0]] < rank[rel[1]]
    m, a, b = (rank[i] for i in rel)
    return min(a, b) < m < max(a, b)


@dataclass(frozen=True)
class PartialChain:
    """Compl.normal world: the chain minus entity k, plus one link attaching k to a neighbour."""

    n: int
    k: int
    attach_after: bool  # True: k is only known to follow k-1; False: only to precede k+1

    @property
    def description(self) -> list[Rel]:
        rest = [i for i in range(self.n) if i != self.k]
        rels = list(zip(rest, rest[1:], strict=False))
        rels.append((self.k - 1, self.k) if self.attach_after else (self.k, self.k + 1))
        return rels

    def models(self) -> list[dict[int, int]]:
        """Every order the description allows: k slid along the side it is not anchored to."""
        rest = [i for i in range(self.n) if i != self.k]
        anchor = rest.index(self.k - 1) + 1 if self.attach_after else rest.index(self.k + 1)
        slots = range(anchor, len(rest) + 1) if self.attach_after else range(anchor + 1)
        orders = [rest[:s] + [self.k] + rest[s:] for s in slots]
        return [{e: r for r, e in enumerate(order)} for order in orders]

    def candidates(self, arity: int) -> tuple[list[Rel], list[Rel]]:
        """(relations true in every model, undetermined relations involving k) of one arity.

        Binary candidates are all ordered pairs; ternary ones name their ends in ascending order.
        """
        models = self.models()
        entailed: list[Rel] = []
        open_k: list[Rel] = []
        for combo in permutations(range(self.n), arity):
            if arity == 3 and combo[1] > combo[2]:
                continue
            values = {holds(combo, rank) for rank in models}
            if values == {True}:
                entailed.append(combo)
            elif len(values) == 2 and self.k in combo:
                open_k.append(combo)
        return entailed, open_k


def partial_chain(n: int, rng: random.Random) -> PartialChain:
    return PartialChain(n=n, k=rng.randint(1, n - 2), attach_after=rng.random() < 0.5)
