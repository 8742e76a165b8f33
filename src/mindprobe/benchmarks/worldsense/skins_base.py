"""Data types for WorldSense skins (surface domains), shared by the skin tables.

A skin is pure data: every sentence the generator writes comes from one of these templates, so
adding a domain never touches generation logic. Placeholders: ``{n}`` entity count, ``{x}``/``{y}``
subject/object of a binary relation, ``{m}`` middle and ``{a}``/``{b}`` ends of a ternary one,
``{e}`` the entity of an extremum statement.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Comparison:
    """A dimension unrelated to the skin's order (Compl.trivial variant a): 'more' / 'less' forms."""

    q_more: str
    q_less: str
    s_more: str
    s_less: str


@dataclass(frozen=True)
class Skin:
    """One ordering domain. Pole 0 is the 'forward' end: ``fwd`` says x is closer to it than y.

    Statement bodies (``fwd``, ``bwd``, ``tern``, ``tern_out``) follow ``prefix``; in a description
    list the prefix is written on the first relation only (spec §5.1). Question forms (``q_*``)
    and extremum statements (``first``, ``last``) are complete.
    """

    name: str
    intro: str
    list_intro: str
    pool: tuple[str, ...]
    fwd: str
    bwd: str
    tern: str
    tern_out: str
    q_fwd: str
    q_bwd: str
    q_tern: str
    q_tern_out: str
    first: str
    last: str
    unrelated: tuple[Comparison, ...]
    prefix: str = ""


@dataclass(frozen=True)
class ParallelSkin:
    """A grid domain for Infer.parallel: entities are lines that are parallel or perpendicular."""

    name: str
    intro: str
    pool: tuple[str, ...]
    par: str = "{x} is parallel to {y}"
    perp: str = "{x} is perpendicular to {y}"


def comparison(more: str, less: str, verb: str = "is") -> Comparison:
    """Build a plain comparative ('is x taller than y' / 'x is taller than y')."""
    return Comparison(
        q_more=f"{verb} {{x}} {more} than {{y}}",
        q_less=f"{verb} {{x}} {less} than {{y}}",
        s_more=f"{{x}} {verb} {more} than {{y}}",
        s_less=f"{{x}} {verb} {less} than {{y}}",
    )


PEOPLE = (
    "Alice",
    "Claire",
    "David",
    "Emily",
    "Frank",
    "Grace",
    "James",
    "Linda",
    "Michael",
    "Patricia",
    "Robert",
    "William",
)

OLDER = comparison("older", "younger")
TALLER = comparison("taller", "shorter")
RICHER = comparison("richer", "poorer")
HAPPIER = comparison("happier", "sadder")
FASTER = comparison("faster", "slower")
STRONGER = comparison("stronger", "weaker")
HEAVIER = comparison("heavier", "lighter")
PRICIER = comparison("more expensive", "cheaper")
