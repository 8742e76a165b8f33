"""The eight WorldSense problem families: each builds one tuple of trials (spec §5.3).

A family receives a :class:`Setting` (seeded rng, skin, entity names, prompt template,
complexity) and returns one :class:`Draft` per trial, each possible gold answer exactly once.
Gold labels follow the corrected rules of spec §5.4, so upstream's label noise is not repeated.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from . import wording as render
from .skins_base import ParallelSkin, Skin
from .wording import Names
from .worlds import (
    Rel,
    adjacent_links,
    complete_description,
    negation,
    partial_chain,
    span,
    true_relation,
)

TF = ["TRUE", "FALSE"]
PI = ["POSSIBLE", "IMPOSSIBLE"]
CHOICES = ["1", "2", "3"]


@dataclass(frozen=True)
class Setting:
    """Everything a family needs to build one tuple; ``objects[i]`` sits at position i."""

    rng: random.Random
    skin: Skin | ParallelSkin
    objects: list[str]
    qskin: str
    complexity: int
    absent: str = ""

    @property
    def n(self) -> int:
        return len(self.objects)

    @property
    def intro(self) -> str:
        return self.skin.intro.format(n=self.n)

    @property
    def names(self) -> Names:
        return Names(self.objects, self.absent)

    @property
    def ordering_skin(self) -> Skin:
        if not isinstance(self.skin, Skin):
            raise TypeError(f"skin {self.skin.name!r} is not an ordering skin")
        return self.skin


@dataclass(frozen=True)
class Draft:
    """One trial before ids are attached: the structured fields plus its plain gold token."""

    text: str
    expectedresp: list[str]
    descr: str
    query: str
    gold: str
    span: int | None
    query_len: int


def literal(rels: list[tuple]) -> str:
    """The official ``descr`` syntax: ``[(1, 2),(0, 1)]``."""
    return "[" + ",".join(str(r) for r in rels) + "]"


def _written(s: Setting, rels: list[Rel]) -> list[tuple[Rel, bool]]:
    return [(rel, s.rng.random() < 0.5) for rel in rels]


def _relations(s: Setting, rels: list[Rel]) -> str:
    return render.relation_list(s.ordering_skin, _written(s, rels), s.names)


def _tf_pair(s: Setting, description: str, rels: list[Rel]) -> list[Draft]:
    """A true query (span >= 2) and its negation asked about the same description."""
    q = true_relation(s.n, s.rng)
    drafts = []
    for rel, gold in ((q, "TRUE"), (negation(q, s.rng), "FALSE")):
        sentence = render.statement(s.ordering_skin, rel, s.rng.random() < 0.5, s.names)
        text = render.tf_text(description, sentence, s.qskin)
        drafts.append(Draft(text, TF, literal(rels), str(rel), gold, span(rel), len(rel)))
    return drafts


def infer_trivial(s: Setting) -> list[Draft]:
    rels = adjacent_links(s.n)
    skin = s.ordering_skin
    description = render.list_description(s.intro, skin.list_intro, s.objects)
    return _tf_pair(s, description, rels)


def infer_normal(s: Setting) -> list[Draft]:
    rels = complete_description(s.n, s.complexity, s.rng)
    description = render.sentence_description(s.intro, _relations(s, rels))
    return _tf_pair(s, description, rels)


def infer_extrema(s: Setting) -> list[Draft]:
    """Is entity e (an end of the order) the first-pole or the last-pole extreme?"""
    rels = complete_description(s.n, s.complexity, s.rng)
    description = render.sentence_description(s.intro, _relations(s, rels))
    e = s.rng.choice((0, s.n - 1))
    skin = s.ordering_skin
    drafts = []
    for template, first_pole in ((skin.first, True), (skin.last, False)):
        gold = "TRUE" if e == (0 if first_pole else s.n - 1) else "FALSE"
        text = render.tf_text(description, template.format(e=s.objects[e]), s.qskin)
        drafts.append(Draft(text, TF, literal(rels), str((e, first_pole)), gold, 0, 2))
    return drafts


def _consist(s: Setting, inserted: Rel, base: list[Rel], trivial: bool) -> list[Draft]:
    """The description with ``inserted`` (POSSIBLE) or its negation (IMPOSSIBLE) slipped in."""
    written = _written(s, base)
    position = s.rng.randint(0, len(base))
    drafts = []
    for rel, gold in ((inserted, "POSSIBLE"), (negation(inserted, s.rng), "IMPOSSIBLE")):
        rels = [*base[:position], rel, *base[position:]]
        shown = [*written[:position], (rel, s.rng.random() < 0.5), *written[position:]]
        relations = render.relation_list(s.ordering_skin, shown, s.names)
        text = render.pi_text(s.intro, relations, s.qskin)
        drafts.append(
            Draft(text, PI, literal(rels), str(rel), gold, 0 if trivial else span(rel), len(rel))
        )
    return drafts


def consist_trivial(s: Setting) -> list[Draft]:
    """The clash (if any) is with one stated relation: a copy or the negation of it."""
    base = complete_description(s.n, s.complexity, s.rng)
    return _consist(s, s.rng.choice(base), base, trivial=True)


def consist_normal(s: Setting) -> list[Draft]:
    """The inserted relation (span >= 2) is never a restatement, so a clash needs chaining."""
    base = complete_description(s.n, s.complexity, s.rng)
    stated = [set(rel) for rel in base if len(rel) == 3]
    inserted = true_relation(s.n, s.rng)
    while len(inserted) == 3 and set(inserted) in stated:
        inserted = true_relation(s.n, s.rng)
    return _consist(s, inserted, base, trivial=False)


def _compl_draft(
    s: Setting,
    relations: str,
    rels: list[Rel],
    query: str,
    opts: tuple[str, str],
    gold: str,
    query_span: int,
    query_len: int,
) -> Draft:
    text = render.compl_text(s.intro, relations, opts, s.qskin)
    return Draft(text, CHOICES, literal(rels), query, gold, query_span, query_len)


def _compl_known(s: Setting, relations: str, rels: list[Rel], q1: Rel) -> list[Draft]:
    """Options for a decided relation (gold 1) and for its negation (gold 2)."""
    drafts = []
    for rel, gold in ((q1, "1"), (negation(q1, s.rng), "2")):
        opts = render.options(s.ordering_skin, rel, s.rng.random() < 0.5, s.names, s.qskin)
        drafts.append(_compl_draft(s, relations, rels, str(rel), opts, gold, span(rel), len(rel)))
    return drafts


def compl_trivial(s: Setting) -> list[Draft]:
    """Complete description; the undecidable item asks about another dimension or a stranger."""
    rels = complete_description(s.n, 0, s.rng)
    relations = _relations(s, rels)
    q1 = true_relation(s.n, s.rng)
    drafts = _compl_known(s, relations, rels, q1)
    if len(q1) == 2 and s.rng.random() < 0.5:
        pair = list(q1)
        s.rng.shuffle(pair)
        x, y = (s.objects[i] for i in pair)
        dim = s.rng.choice(s.ordering_skin.unrelated)
        opts = render.unrelated_options(dim, x, y, s.rng.random() < 0.5, s.qskin)
        query = f"i({pair[0]}, {pair[1]})"
        drafts.append(_compl_draft(s, relations, rels, query, opts, "3", span(q1), 2))
    else:
        source = list(s.rng.choice((q1, negation(q1, s.rng))))
        source[s.rng.randrange(len(source))] = -1
        q3 = tuple(source)
        opts = render.options(s.ordering_skin, q3, s.rng.random() < 0.5, s.names, s.qskin)
        drafts.append(_compl_draft(s, relations, rels, str(q3), opts, "3", span(q1), len(q3)))
    return drafts


def compl_normal(s: Setting) -> list[Draft]:
    """One entity is attached by a single link: q1 is entailed, q3 depends on where it sits."""
    world = partial_chain(s.n, s.rng)
    rels = world.description
    s.rng.shuffle(rels)
    relations = _relations(s, rels)
    arity = 2 if s.n == 3 or s.rng.random() < 0.5 else 3
    entailed, undetermined = world.candidates(arity)
    drafts = _compl_known(s, relations, rels, s.rng.choice(entailed))
    q3 = s.rng.choice(undetermined)
    opts = render.options(s.ordering_skin, q3, s.rng.random() < 0.5, s.names, s.qskin)
    drafts.append(_compl_draft(s, relations, rels, str(q3), opts, "3", span(q3), arity))
    return drafts


def infer_parallel(s: Setting) -> list[Draft]:
    """Lines on a chain of parallel/perpendicular links; parity of 'perp' links decides.

    ``descr`` stores each stated link as ``(x, y, 'par'|'perp')`` and ``query`` the asked claim
    as ``(x, y, 'par'|'perp')`` (upstream stored a dummy ``(0, 1)``), so a solver needs no text.
    """
    skin = s.skin
    if not isinstance(skin, ParallelSkin):
        raise TypeError(f"Infer.parallel needs a grid skin, got {skin.name!r}")
    kinds = [s.rng.choice(("par", "perp")) for _ in range(s.n - 1)]
    links = []
    for i, kind in enumerate(kinds):
        x, y = (i, i + 1) if s.rng.random() < 0.5 else (i + 1, i)
        links.append((x, y, kind))
    s.rng.shuffle(links)
    parts = [
        (skin.par if k == "par" else skin.perp).format(x=s.objects[x], y=s.objects[y])
        for x, y, k in links
    ]
    description = render.sentence_description(s.intro, render.join_relations(parts), period=False)
    length = s.rng.randint(2, s.n - 1)
    a = s.rng.randint(0, s.n - 1 - length)
    x, y = (a, a + length) if s.rng.random() < 0.5 else (a + length, a)
    parallel = kinds[a : a + length].count("perp") % 2 == 0
    drafts = []
    for kind, template in (("par", skin.par), ("perp", skin.perp)):
        gold = "TRUE" if parallel == (kind == "par") else "FALSE"
        sentence = template.format(x=s.objects[x], y=s.objects[y])
        text = render.tf_text(description, sentence, s.qskin)
        drafts.append(Draft(text, TF, literal(links), str((x, y, kind)), gold, None, 2))
    return drafts


FAMILIES: dict[str, Callable[[Setting], list[Draft]]] = {
    "Infer.trivial": infer_trivial,
    "Infer.normal": infer_normal,
    "Consist.trivial": consist_trivial,
    "Consist.normal": consist_normal,
    "Compl.trivial": compl_trivial,
    "Compl.normal": compl_normal,
    "Infer.extrema": infer_extrema,
    "Infer.parallel": infer_parallel,
}

# Families whose tuples cycle through Complexity_0/1/2 (the others are Complexity_0 only).
LEVELS: dict[str, int] = {
    "Infer.normal": 3,
    "Consist.trivial": 3,
    "Consist.normal": 3,
    "Infer.extrema": 3,
}
