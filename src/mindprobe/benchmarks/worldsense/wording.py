"""Turning relations into WorldSense prompt text (spec §5.1 rendering, §5.5 templates).

Relations are tuples of entity indices: ``(p, s)`` claims p precedes s, ``(m, a, b)`` claims m
lies between a and b; index -1 names the absent entity of a Compl.trivial item. Each written
relation carries a ``flip`` bit chosen by the caller: a binary is then said in its backward form
("s <backward> p"), a ternary names its ends in swapped order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .skins_base import Comparison, Skin

Rel = tuple[int, ...]

# §5.5: the exact benchmark-defining template strings of the official WorldSense test set
# (facebookresearch/worldsense, data/worldsense/test_set), used verbatim.
_TF_Q1 = (
    "{d}\nIs the following sentence '{s}' TRUE or FALSE ?\n"
    "Only respond with one of these 2 options: 'TRUE', 'FALSE' without any explanation."
)
_TF_Q2 = (
    "{d}\nOnly respond with one of these 2 options: 'TRUE', 'FALSE' without any explanation:\n"
    "Is the following sentence '{s}' TRUE or FALSE?"
)
_PI_Q1 = (
    "{i}. If I say '{r}.', is the situation I just described possible or impossible ? "
    "Only respond with 'POSSIBLE' or 'IMPOSSIBLE' without any explanation. "
)
_PI_Q2 = (
    "{i}.\nIf one were to say: '{r}.', would that situation be POSSIBLE or IMPOSSIBLE ? "
    "Only respond with 'POSSIBLE' or 'IMPOSSIBLE' without any explanation:\n"
)
_C_Q1 = (
    "{i}: {r}. \n(1) {a}, (2) {b}, or (3) is it impossible to decide ?\n"
    "Only respond with one of these options: (1), (2), or (3) without any explanation."
)
_C_Q2 = (
    "{i}: {r}. \nChoose one of the following alternatives: (1) {a}, (2) {b}, "
    "or (3) it is impossible to decide.\n"
    "Think carefully, and only respond with one of these possible options (1), (2), or (3)."
)
QSKINS = ("directQ1", "directQ2")


@dataclass(frozen=True)
class Names:
    """Entity names by index (index = position in the hidden order); -1 is the absent entity."""

    objects: Sequence[str]
    absent: str = ""

    def __call__(self, index: int) -> str:
        return self.absent if index < 0 else self.objects[index]


def _pick(qskin: str, q1: str, q2: str) -> str:
    if qskin not in QSKINS:
        raise ValueError(f"unknown qskin {qskin!r}; choose from {', '.join(QSKINS)}")
    return q1 if qskin == "directQ1" else q2


def _binary_roles(rel: Rel, flip: bool, names: Names) -> tuple[str, str]:
    """Subject and object as written: the preceding entity leads unless the form is backward."""
    first, second = names(rel[0]), names(rel[1])
    return (second, first) if flip else (first, second)


def _ternary_roles(rel: Rel, flip: bool, names: Names) -> dict[str, str]:
    m, a, b = (names(i) for i in rel)
    return {"m": m, "a": b, "b": a} if flip else {"m": m, "a": a, "b": b}


def body(skin: Skin, rel: Rel, flip: bool, names: Names) -> str:
    """A relation without the skin's subject prefix (as written after the first list item)."""
    if len(rel) == 2:
        x, y = _binary_roles(rel, flip, names)
        return (skin.bwd if flip else skin.fwd).format(x=x, y=y)
    return skin.tern.format(**_ternary_roles(rel, flip, names))


def statement(skin: Skin, rel: Rel, flip: bool, names: Names) -> str:
    """A complete sentence stating the relation (TF query sentence, directQ2 option)."""
    return skin.prefix + body(skin, rel, flip, names)


def join_relations(parts: Sequence[str]) -> str:
    """'r1, r2, ... and rk' (no serial comma)."""
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def relation_list(skin: Skin, written: Sequence[tuple[Rel, bool]], names: Names) -> str:
    """A description's relations; the subject prefix appears on the first one only."""
    parts = [body(skin, rel, flip, names) for rel, flip in written]
    parts[0] = skin.prefix + parts[0]
    return join_relations(parts)


def options(skin: Skin, rel: Rel, flip: bool, names: Names, qskin: str) -> tuple[str, str]:
    """Compl options (1) 'rel holds' and (2) its opposite, same entities in the same order."""
    if len(rel) == 2:
        x, y = _binary_roles(rel, flip, names)
        if qskin == "directQ1":
            yes, no = (skin.q_bwd, skin.q_fwd) if flip else (skin.q_fwd, skin.q_bwd)
            return yes.format(x=x, y=y), no.format(x=x, y=y)
        yes, no = (skin.bwd, skin.fwd) if flip else (skin.fwd, skin.bwd)
        return skin.prefix + yes.format(x=x, y=y), skin.prefix + no.format(x=x, y=y)
    roles = _ternary_roles(rel, flip, names)
    if qskin == "directQ1":
        return skin.q_tern.format(**roles), skin.q_tern_out.format(**roles)
    return skin.prefix + skin.tern.format(**roles), skin.prefix + skin.tern_out.format(**roles)


def unrelated_options(
    dim: Comparison, x: str, y: str, more_first: bool, qskin: str
) -> tuple[str, str]:
    """Compl options on a dimension the description says nothing about."""
    more, less = (dim.q_more, dim.q_less) if qskin == "directQ1" else (dim.s_more, dim.s_less)
    if not more_first:
        more, less = less, more
    return more.format(x=x, y=y), less.format(x=x, y=y)


def list_description(intro: str, list_intro: str, objects: Sequence[str]) -> str:
    """The bulleted, ordered description of Infer.trivial."""
    return f"{intro}. {list_intro}:" + "".join(f"\n  - {o}" for o in objects) + "\n"


def sentence_description(intro: str, relations: str, period: bool = True) -> str:
    """'intro: relations.' (Infer.parallel's upstream form has no final period)."""
    return f"{intro}: {relations}" + ("." if period else "")


def tf_text(description: str, sentence: str, qskin: str) -> str:
    return _pick(qskin, _TF_Q1, _TF_Q2).format(d=description, s=sentence)


def pi_text(intro: str, relations: str, qskin: str) -> str:
    return _pick(qskin, _PI_Q1, _PI_Q2).format(i=intro, r=relations)


def compl_text(intro: str, relations: str, opts: tuple[str, str], qskin: str) -> str:
    return _pick(qskin, _C_Q1, _C_Q2).format(i=intro, r=relations, a=opts[0], b=opts[1])
