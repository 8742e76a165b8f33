"""Registry of the WorldSense skins used by the fresh-problem generator.

The 18 ordering skins reproduce the official test set's domains (spec §5.6); the three grid
skins serve Infer.parallel (upstream ood-problem), whose items were not shipped, so their wording
is ours, modelled on the spec's description.
"""

from __future__ import annotations

from .skins_base import ParallelSkin, Skin
from .skins_scalar import SCALAR_SKINS
from .skins_spatial import SPATIAL_SKINS
from .skins_temporal import TEMPORAL_SKINS

SKINS: dict[str, Skin] = {s.name: s for s in (*SCALAR_SKINS, *SPATIAL_SKINS, *TEMPORAL_SKINS)}

TEST_SKINS: tuple[str, ...] = tuple(SKINS)

_COLOURS = (
    "red",
    "pink",
    "gray",
    "blue",
    "green",
    "yellow",
    "orange",
    "purple",
    "black",
    "brown",
    "white",
    "silver",
)

PARALLEL_SKINS: dict[str, ParallelSkin] = {
    "lines": ParallelSkin(
        name="lines",
        intro="Marta drew {n} colored lines on a large sheet of paper",
        pool=tuple(f"the {c} line" for c in _COLOURS),
    ),
    "streets": ParallelSkin(
        name="streets",
        intro="The streets of this city look like a grid: any two streets are either parallel or "
        "perpendicular. We consider {n} streets",
        pool=tuple(
            f"{t} Street"
            for t in (
                "Oak",
                "Maple",
                "Pine",
                "Cedar",
                "Elm",
                "Birch",
                "Willow",
                "Walnut",
                "Chestnut",
                "Cherry",
                "Spruce",
                "Ash",
            )
        ),
    ),
    "canals": ParallelSkin(
        name="canals",
        intro="The canals of neo-Venice look like a grid: any two canals are either parallel or "
        "perpendicular. We consider {n} canals",
        pool=tuple(
            f"the {t} Canal"
            for t in (
                "Coral",
                "Lantern",
                "Merchant",
                "Violet",
                "Glass",
                "Harbour",
                "Salt",
                "Copper",
                "Lily",
                "Falcon",
                "Amber",
                "Bridge",
            )
        ),
    ),
}


def get_skin(name: str) -> Skin:
    """Look up an ordering skin, naming the valid choices when the name is unknown."""
    try:
        return SKINS[name]
    except KeyError:
        raise ValueError(
            f"unknown WorldSense skin {name!r}; choose from {', '.join(SKINS)}"
        ) from None


def get_parallel_skin(name: str) -> ParallelSkin:
    """Look up an Infer.parallel skin, naming the valid choices when the name is unknown."""
    try:
        return PARALLEL_SKINS[name]
    except KeyError:
        valid = ", ".join(PARALLEL_SKINS)
        raise ValueError(f"unknown Infer.parallel skin {name!r}; choose from {valid}") from None
