"""The six comparative (scalar) test skins: people ordered by age, height, speed, mood, wealth,
strength. Wording follows the official test set (spec §5.6), with upstream typos left out."""

from __future__ import annotations

from .skins_base import (
    FASTER,
    HAPPIER,
    OLDER,
    PEOPLE,
    RICHER,
    STRONGER,
    TALLER,
    Comparison,
    Skin,
)

STRONG_POOL = (
    "Alex",
    "Charles",
    "David",
    "Emmanuel",
    "Frank",
    "George",
    "James",
    "Leroy",
    "Michael",
    "Patrick",
    "Robert",
    "William",
)


def _noun_skin(
    name: str,
    intro: str,
    order: str,
    words: tuple[str, str],
    noun: str,
    outside: str,
    extrema: tuple[str, str],
    unrelated: tuple[Comparison, ...],
    pool: tuple[str, ...] = PEOPLE,
    q_outside: str = "interval",
) -> Skin:
    """A skin whose ternary talks about a possessed quantity ("x's speed is in between ...").

    ``outside`` names the excluded stretch in statements, ``q_outside`` in questions.
    """
    more, less = words
    span = f"{{a}}'s {noun} and {{b}}'s {noun}"
    return Skin(
        name=name,
        intro=intro,
        list_intro=f"Let us first list them in order from {order}",
        pool=pool,
        fwd=f"{{x}} is {more} than {{y}}",
        bwd=f"{{x}} is {less} than {{y}}",
        tern=f"{{m}}'s {noun} is in between {span}",
        tern_out=f"{{m}}'s {noun} is outside of the {outside} between {span}",
        q_fwd=f"is {{x}} {more} than {{y}}",
        q_bwd=f"is {{x}} {less} than {{y}}",
        q_tern=f"is {{m}}'s {noun} between {span}",
        q_tern_out=f"is {{m}}'s {noun} outside of the {q_outside} between {span}",
        first=extrema[0],
        last=extrema[1],
        unrelated=unrelated,
    )


OLD_YOUNG = Skin(
    name="old/young",
    intro="The Smith's had {n} children",
    list_intro="Let us first list them in order from the eldest to the youngest",
    pool=PEOPLE,
    fwd="{x} is older than {y}",
    bwd="{x} is younger than {y}",
    tern="{m}'s age is between that of {a} and {b}",
    tern_out="{m} is outside of the age range between {a} and {b}",
    q_fwd="is {x} older than {y}",
    q_bwd="is {x} younger than {y}",
    q_tern="is {m}'s age between that of {a} and {b}",
    q_tern_out="is {m} outside of the age range between {a} and {b}",
    first="{e} is the oldest of the children",
    last="{e} is the youngest of the children",
    unrelated=(RICHER, HAPPIER, TALLER),
)

TALL_SHORT = _noun_skin(
    "tall/short",
    "There are {n} people of different heights in a room",
    "tallest to shortest",
    ("taller", "shorter"),
    "height",
    "range",
    ("{e} is the tallest person in the room", "{e} is the shortest person in the room"),
    (RICHER, FASTER, OLDER),
)

FASTER_SLOWER = _noun_skin(
    "faster/slower",
    "There are {n} people participating in a race, running at different speeds",
    "fastest to slowest",
    ("faster", "slower"),
    "speed",
    "interval",
    ("{e} is the fastest runner of the race", "{e} is the slowest runner of the race"),
    (OLDER, TALLER, RICHER),
)

HAPPIER_SADDER = _noun_skin(
    "happier/sadder",
    "{n} students come out of the algebra exam and vary in how they feel about their performance",
    "happiest to saddest",
    ("happier", "sadder"),
    "happiness level",
    "interval",
    ("{e} is the happiest of the students", "{e} is the saddest of the students"),
    (OLDER, TALLER, STRONGER),
)

RICH_POOR = _noun_skin(
    "rich/poor",
    "There are {n} people in a college reunion party discussing their respective wealth",
    "richest to poorest",
    ("richer", "poorer"),
    "wealth",
    "interval",
    ("{e} is the richest person at the party", "{e} is the poorest person at the party"),
    (OLDER, TALLER, HAPPIER),
)

STRONGER_WEAKER = _noun_skin(
    "stronger/weaker",
    "There are {n} friends playing pull the rope and who differ in strength",
    "strongest to weakest",
    ("stronger", "weaker"),
    "strength",
    "interval",
    ("{e} is the strongest of the friends", "{e} is the weakest of the friends"),
    (OLDER, TALLER, RICHER),
    pool=STRONG_POOL,
)

SCALAR_SKINS: tuple[Skin, ...] = (
    OLD_YOUNG,
    TALL_SHORT,
    FASTER_SLOWER,
    HAPPIER_SADDER,
    RICH_POOR,
    STRONGER_WEAKER,
)
