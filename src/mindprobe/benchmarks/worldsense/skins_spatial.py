"""The six spatial test skins: objects or people on a horizontal line, in a queue, on shelves or
floors. Wording follows the official test set (spec §5.6), with upstream typos left out."""

from __future__ import annotations

from .skins_base import HEAVIER, OLDER, PEOPLE, PRICIER, TALLER, Comparison, Skin

OBJECTS = (
    "the black book",
    "the blue box",
    "the brown mug",
    "the gray briefcase",
    "the green guitar",
    "the orange table",
    "the pink shoe",
    "the purple bag",
    "the red ball",
    "the silver watch",
    "the white bicycle",
    "the yellow chair",
)

SHELF_OBJECTS = (
    "the black book",
    "the blue box",
    "the brown mug",
    "the gray briefcase",
    "the green guitar",
    "the orange phone",
    "the pink shoe",
    "the purple bag",
    "the red ball",
    "the silver watch",
    "the white paper",
    "the yellow car",
)

_INTERVAL = "outside of the interval between"


def _line_skin(
    name: str,
    intro: str,
    list_intro: str,
    pool: tuple[str, ...],
    words: tuple[str, str],
    between: tuple[str, str, str],
    extrema: tuple[str, str],
    unrelated: tuple[Comparison, ...],
) -> Skin:
    """A skin phrased with 'is': 'x is <before> y', 'm is <between> a and b'.

    ``between`` = (statement word, question word, outside phrase) for the ternary.
    """
    before, after = words
    tern, q_tern, outside = between
    return Skin(
        name=name,
        intro=intro,
        list_intro=list_intro,
        pool=pool,
        fwd=f"{{x}} is {before} {{y}}",
        bwd=f"{{x}} is {after} {{y}}",
        tern=f"{{m}} is {tern} {{a}} and {{b}}",
        tern_out=f"{{m}} is {outside} {{a}} and {{b}}",
        q_fwd=f"is {{x}} {before} {{y}}",
        q_bwd=f"is {{x}} {after} {{y}}",
        q_tern=f"is {{m}} {q_tern} {{a}} and {{b}}",
        q_tern_out=f"is {{m}} {outside} {{a}} and {{b}}",
        first=extrema[0],
        last=extrema[1],
        unrelated=unrelated,
    )


_LEFT_RIGHT = ("to the left of", "to the right of")
_FRONT_BACK = ("in front of", "behind")

OBJ_LEFT_RIGHT = _line_skin(
    "obj_LeftRight",
    "There are {n} objects arranged in a line",
    "Let us first list them from left to right",
    OBJECTS,
    _LEFT_RIGHT,
    ("between", "between", _INTERVAL),
    ("{e} is the leftmost object", "{e} is the rightmost object"),
    (HEAVIER, PRICIER),
)

PEOPLE_LEFT_RIGHT = _line_skin(
    "people_LeftRight",
    "There are {n} people arranged in a line",
    "We list them from left to right",
    PEOPLE,
    _LEFT_RIGHT,
    ("between", "between", _INTERVAL),
    ("{e} is the leftmost person", "{e} is the rightmost person"),
    (OLDER, TALLER),
)

OBJ_FRONT_BACK = _line_skin(
    "obj_FrontBack",
    "There are {n} objects arranged in a line",
    "Here we list them in order from front to back",
    OBJECTS,
    _FRONT_BACK,
    ("between", "between", _INTERVAL),
    ("{e} is the object at the front of the line", "{e} is the object at the back of the line"),
    (HEAVIER, PRICIER),
)

PEOPLE_FRONT_BACK = _line_skin(
    "people_FrontBack",
    "There are {n} people waiting in a line",
    "Here we list them from the front of the line to the back of the line",
    PEOPLE,
    _FRONT_BACK,
    ("in between", "between", _INTERVAL),
    ("{e} is the first person in the line", "{e} is the last person in the line"),
    (OLDER, TALLER),
)

OBJ_ABOVE_BELOW = _line_skin(
    "obj_AboveBelow",
    "There is a stand with shelves vertically arranged. "
    "There are {n} objects, each placed on a unique shelf",
    "Here we list them from top to bottom",
    SHELF_OBJECTS,
    ("above", "below"),
    ("on a shelf between", "on a shelf between", "on a shelf outside of the range between"),
    ("{e} is on the top shelf", "{e} is on the bottom shelf"),
    (HEAVIER, PRICIER),
)

PEOPLE_ABOVE_BELOW = Skin(
    name="people_AboveBelow",
    intro="There are {n} people in the same building, each living on a different floor",
    list_intro="Here we list them in order from the highest floor to the lowest floor",
    pool=PEOPLE,
    fwd="{x} lives above {y}",
    bwd="{x} lives below {y}",
    tern="{m} lives on a floor between {a} and {b}",
    tern_out="{m} lives on a floor outside of the range between {a} and {b}",
    q_fwd="does {x} live above {y}",
    q_bwd="does {x} live below {y}",
    q_tern="does {m} live on a floor between {a} and {b}",
    q_tern_out="does {m} live on a floor outside of the range between {a} and {b}",
    first="{e} lives on the highest floor",
    last="{e} lives on the lowest floor",
    unrelated=(OLDER, TALLER),
)

SPATIAL_SKINS: tuple[Skin, ...] = (
    OBJ_LEFT_RIGHT,
    PEOPLE_LEFT_RIGHT,
    OBJ_FRONT_BACK,
    PEOPLE_FRONT_BACK,
    OBJ_ABOVE_BELOW,
    PEOPLE_ABOVE_BELOW,
)
