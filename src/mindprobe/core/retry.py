"""One retry policy for every HTTP client (model servers, endpoint routing, Wikipedia)."""

from __future__ import annotations

import random

#: How long a server's Retry-After may hold one request back.
MAX_RETRY_AFTER = 120.0


def backoff_delay(rng: random.Random, attempt: int, base: float, cap: float,
                  retry_after: float | None = None) -> float:
    """Jittered exponential backoff (half to all of min(cap, base·2^attempt)); a server's
    Retry-After (capped at MAX_RETRY_AFTER) is a floor, not a suggestion."""
    ceiling = min(cap, base * 2.0**attempt)
    wait = rng.uniform(ceiling / 2, ceiling)
    return wait if retry_after is None else max(wait, min(retry_after, MAX_RETRY_AFTER))
