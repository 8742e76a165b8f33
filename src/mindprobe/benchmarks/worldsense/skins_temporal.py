"""The six temporal test skins: events in time (sessions, chats, courses, trips, shops, a race).

The subject prefix ("Tim saw ", "Jackie talked ", ...) is written only on the first relation of a
description (spec §5.1). Wording follows the official test set, with upstream typos left out.
"""

from __future__ import annotations

from .skins_base import Comparison, Skin, comparison

ACTIVITIES = Skin(
    name="activities",
    intro="During the Olympics, Tim attended {n} sessions, each showcasing a unique discipline",
    list_intro="Here is the list of the sessions' disciplines, in the order in which he attended them",
    pool=(
        "archery", "climbing", "fencing", "gymnastics", "handball", "horseback riding",
        "karate", "rowing", "sailing", "sprint", "swimming", "volleyball",
    ),  # fmt: skip
    prefix="Tim saw ",
    fwd="{x} before {y}",
    bwd="{x} after {y}",
    tern="{m} in between {a} and {b}",
    tern_out="{m} outside of the time frame between {a} and {b}",
    q_fwd="was {x} before {y}",
    q_bwd="was {x} after {y}",
    q_tern="was {m} between {a} and {b}",
    q_tern_out="was {m} outside of the time frame between {a} and {b}",
    first="Tim saw {e} first",
    last="Tim saw {e} last",
    unrelated=(
        comparison("more popular", "less popular", "was"),
        comparison("better attended", "less attended", "was"),
    ),
)

CONVERSATION = Skin(
    name="conversation",
    intro="At Thanksgiving Jackie had a chat successively with each of the {n} family members "
    "who were present",
    list_intro="She talked with them in the following order",
    pool=(
        "her aunt", "her brother", "her cousin", "her father", "her grandfather",
        "her grandmother", "her husband", "her mother", "her nephew", "her niece",
        "her sister", "her uncle",
    ),  # fmt: skip
    prefix="Jackie talked ",
    fwd="to {x} before talking to {y}",
    bwd="to {x} after talking to {y}",
    tern="to {m} in between talking to {a} and {b}",
    tern_out="to {m} outside of the interval between talking to {a} and {b}",
    q_fwd="Did she talk to {x} before talking to {y}",
    q_bwd="Did she talk to {x} after talking to {y}",
    q_tern="Did she talk to {m} between talking to {a} and {b}",
    q_tern_out="Did she talk to {m} outside of the interval between talking to {a} and {b}",
    first="Jackie talked to {e} first",
    last="Jackie talked to {e} last",
    unrelated=(
        comparison("more chatty", "less chatty", "was"),
        comparison("in a better mood", "in a worse mood", "was"),
    ),
)

COURSES = Skin(
    name="courses",
    intro="Alice is enrolled in {n} courses per week",
    list_intro="Let us first list these courses in the order in which they are scheduled this week",
    pool=(
        "algebra", "analysis", "chemistry", "computer science", "economics", "geography",
        "history", "literature", "philosophy", "physics", "psychology", "robotics",
    ),  # fmt: skip
    prefix="Alice takes ",
    fwd="{x} before {y}",
    bwd="{x} after {y}",
    tern="{m} in between {a} and {b}",
    tern_out="{m} outside of the time range between {a} and {b}",
    q_fwd="is {x} before {y}",
    q_bwd="is {x} after {y}",
    q_tern="is {m} between {a} and {b}",
    q_tern_out="is {m} outside of the time range between {a} and {b}",
    first="Alice takes {e} first in the week",
    last="Alice takes {e} last in the week",
    unrelated=(
        comparison("more difficult", "less difficult"),
        comparison("more popular", "less popular"),
    ),
)

TRIPS = Skin(
    name="trips",
    intro="Over the past years, Bob visited {n} touristic places",
    list_intro="Here we list them in the temporal order in which he visited them",
    pool=(
        "Machu Picchu", "the Acropolis", "the Berlin Wall", "the Big Ben", "the Colosseum",
        "the Eiffel Tower", "the Grand Canyon", "the Great Sphinx", "the Great Wall of China",
        "the Sagrada Familia", "the Statue of Liberty", "the Taj Mahal",
    ),  # fmt: skip
    prefix="Bob visited ",
    fwd="{x} before {y}",
    bwd="{x} after {y}",
    tern="{m} in between his visits to {a} and {b}",
    tern_out="{m} outside of the time period between his visits to {a} and {b}",
    q_fwd="Did Bob visit {x} before {y}",
    q_bwd="Did Bob visit {x} after {y}",
    q_tern="Did Bob visit {m} between his visits to {a} and {b}",
    q_tern_out="Did Bob visit {m} outside of the time period between his visits to {a} and {b}",
    first="Bob visited {e} first",
    last="Bob visited {e} last",
    unrelated=(
        Comparison(
            q_more="was Bob's visit to {x} longer than his visit to {y}",
            q_less="was Bob's visit to {x} shorter than his visit to {y}",
            s_more="Bob's visit to {x} was longer than his visit to {y}",
            s_less="Bob's visit to {x} was shorter than his visit to {y}",
        ),
        Comparison(
            q_more="did Bob enjoy {x} more than {y}",
            q_less="did Bob enjoy {x} less than {y}",
            s_more="Bob enjoyed {x} more than {y}",
            s_less="Bob enjoyed {x} less than {y}",
        ),
    ),
)

SHOPPING = Skin(
    name="shopping",
    intro="Today, John decided to go shopping at {n} stores",
    list_intro="Here is the order in which he visited these stores",
    pool=(
        "the bakery", "the bookshop", "the department store", "the electronics store",
        "the farmers' market", "the furniture store", "the garden center", "the grocery store",
        "the mall", "the pet store", "the sports store", "the stationery store",
    ),  # fmt: skip
    prefix="John went ",
    fwd="to {x} before {y}",
    bwd="to {x} after {y}",
    tern="to {m} between {a} and {b}",
    tern_out="to {m} outside of the interval between {a} and {b}",
    q_fwd="Did he go to {x} before {y}",
    q_bwd="Did he go to {x} after {y}",
    q_tern="Did he go to {m} between {a} and {b}",
    q_tern_out="Did he go to {m} outside of the interval between his visits to {a} and {b}",
    first="John went to {e} first",
    last="John went to {e} last",
    unrelated=(
        Comparison(
            q_more="did he stay longer in {x} than in {y}",
            q_less="did he stay in {x} for a shorter time than in {y}",
            s_more="John stayed longer in {x} than in {y}",
            s_less="John stayed in {x} for a shorter time than in {y}",
        ),
        Comparison(
            q_more="did he spend more money in {x} than in {y}",
            q_less="did he spend less money in {x} than in {y}",
            s_more="John spent more money in {x} than in {y}",
            s_less="John spent less money in {x} than in {y}",
        ),
    ),
)

RACE = Skin(
    name="race",
    intro="At a horse race today, Judy bet on {n} horses",
    list_intro="Here is the order in which the horses crossed the finishing line, from first to last",
    pool=(
        "Blue Monkey", "Galloping Ghost", "Golden Phoenix", "Majestic Moon", "Midnight Blaze",
        "Quicksilver Quest", "Radiant Runner", "Ruby Racer", "Silver Saddle", "Starry Oasis",
        "Thunder Roar", "Velvet Storm",
    ),  # fmt: skip
    prefix="On the finishing line ",
    fwd="{x} arrived before {y}",
    bwd="{x} arrived after {y}",
    tern="{m} arrived between {a} and {b}",
    tern_out="{m} arrived outside of the time interval between the arrivals of {a} and {b}",
    q_fwd="did {x} arrive before {y}",
    q_bwd="did {x} arrive after {y}",
    q_tern="did {m} arrive between {a} and {b}",
    q_tern_out="did {m} arrive outside of the interval between {a} and {b}",
    first="On the finishing line {e} is the winner of the race",
    last="On the finishing line {e} arrived last",
    unrelated=(comparison("taller", "shorter", "was"), comparison("older", "younger", "was")),
)

TEMPORAL_SKINS: tuple[Skin, ...] = (ACTIVITIES, CONVERSATION, COURSES, TRIPS, SHOPPING, RACE)
