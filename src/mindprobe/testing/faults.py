"""Which fault (if any) a request gets: seeded, so a failing test run can be replayed exactly."""

from __future__ import annotations

import random

#: Fault kinds, in the order their rate bands are laid out on [0, 1).
RATE_KINDS = ("500", "429", "timeout", "drop", "malformed")
#: Every kind counted in /stats; ``fail_first_n`` is the deterministic leading-500s fault.
FAULT_KINDS = (*RATE_KINDS, "fail_first_n")


class FaultPlan:
    """Decides per request, in arrival order, whether to inject a fault.

    One uniform draw per request is mapped onto consecutive bands, one per kind, so the rates
    are exact fractions of traffic (``fault_500=0.1, fault_429=0.1`` faults 20% of requests)
    and a rate of 1.0 means every request gets that fault.
    """

    def __init__(self, rates: dict[str, float], fail_first_n: int = 0, seed: int = 0) -> None:
        unknown = set(rates) - set(RATE_KINDS)
        if unknown:
            raise ValueError(f"unknown fault kinds {sorted(unknown)}; known: {list(RATE_KINDS)}")
        for kind, rate in rates.items():
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"fault rate for {kind!r} must be within 0..1, got {rate}")
        total = sum(rates.values())
        if total > 1.0 + 1e-9:
            raise ValueError(
                f"fault rates add up to {total:.3f} > 1; each request gets at most one fault, "
                "so lower the rates until their sum is at most 1"
            )
        if fail_first_n < 0:
            raise ValueError(f"fail_first_n must be >= 0, got {fail_first_n}")
        self._bands: list[tuple[float, str]] = []
        edge = 0.0
        for kind in RATE_KINDS:
            rate = rates.get(kind, 0.0)
            if rate > 0.0:
                edge += rate
                self._bands.append((edge, kind))
        self._fail_first_n = fail_first_n
        self._seen = 0
        self._rng = random.Random(seed)

    def decide(self) -> str | None:
        """Return the fault kind for the next request, or None to serve it normally."""
        self._seen += 1
        if self._seen <= self._fail_first_n:
            return "fail_first_n"
        if not self._bands:
            return None
        draw = self._rng.random()
        for edge, kind in self._bands:
            if draw < edge:
                return kind
        # A total rate of exactly 1.0 can still lose a draw to float rounding of the edges.
        return self._bands[-1][1] if self._bands[-1][0] >= 1.0 - 1e-9 else None
