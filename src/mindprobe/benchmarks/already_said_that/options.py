"""Already Said That's run options (light: imported to build `run already_said_that --help`)."""

from __future__ import annotations

from dataclasses import dataclass

from mindprobe.core.inputs import parse_numbers
from mindprobe.core.options import option

DEFAULT_N_SAMPLES = 250
DEFAULT_MAX_TURNS = 100


@dataclass
class AlreadySaidThatOptions:
    solver: str = option("direct", "upstream's solver of the published runs: direct = one "
                         "call per turn; cot = two calls per turn (reason, then answer, each "
                         "after one of upstream's system messages; only the answer stays in "
                         "the history). The run's prompting label", choices=["direct", "cot"])
    temperature: float | None = option(None, "sampling temperature of every call (default: "
                                       "the published runs' setting from upstream's solver "
                                       "registry, 1); another value is labelled as a "
                                       "deviation (prompting label -tempT)", minimum=0,
                                       metavar="T",
                                       maximum=2)
    n_samples: int = option(DEFAULT_N_SAMPLES, "samples drawn from the 500", minimum=1,
                            maximum=500)
    max_turns: int = option(DEFAULT_MAX_TURNS, "turns per chat (at most 100: a sample has 100 "
                            "distinct words, and each turn may need a new one)", minimum=1,
                            maximum=100)
    estimate: bool = option(False, "print the tokens (and cost) a run would take, with and "
                            "without prefix reuse, then exit; sends nothing, needs no API key")
    price: str | None = option(None, "with --estimate: USD per million tokens, IN, IN,OUT or "
                               "IN,OUT,CACHED_IN (e.g. 2.5,10,1.25)", metavar="IN[,OUT[,CACHED]]",
                               needs="estimate")

    def __post_init__(self) -> None:
        parse_price(self.price)  # refused with the other flags, before any data is loaded


def parse_price(text: str | None) -> tuple[float, ...] | None:
    """`IN`, `IN,OUT` or `IN,OUT,CACHED_IN` in USD per million tokens (finite, not negative)."""
    if not text:
        return None
    parts = parse_numbers(text, "--price", (1, 2, 3), "IN, IN,OUT or IN,OUT,CACHED_IN in USD "
                          "per million tokens")
    return (parts[0], parts[1] if len(parts) > 1 else parts[0], *parts[2:])
