"""One retry policy for every HTTP client (model servers, endpoint routing, Wikipedia)."""

from __future__ import annotations

import random
import time

#: How long a server's Retry-After may hold one request back.
MAX_RETRY_AFTER = 120.0


def backoff_delay(rng: random.Random, attempt: int, base: float, cap: float,
                  retry_after: float | None = None) -> float:
    """Jittered exponential backoff (half to all of min(cap, base·2^attempt)); a server's
    Retry-After (capped at MAX_RETRY_AFTER) is a floor, not a suggestion."""
    ceiling = min(cap, base * 2.0**attempt)
    wait = rng.uniform(ceiling / 2, ceiling)
    return wait if retry_after is None else max(wait, min(retry_after, MAX_RETRY_AFTER))


class Liveness:
    """When a server counts as dead: one rule for every client (model servers, Wikipedia).

    A run should stop with one message instead of failing every remaining item slowly; a
    restart or a short outage should be ridden out. So a server is dead only after
    ``dead_streak`` failed requests in a row *and* a stretch of silence with no good answer:
    ``refused_window`` seconds when nothing answers at all (refused connections, unknown host),
    ``broken_window`` for 5xx, timeouts and garbled bodies. Silence counts from the start (or
    the last good answer). Rate-limit answers (429, Retry-After, MediaWiki's maxlag) are the
    server at work and are never reported here.
    """

    def __init__(self) -> None:
        self.streak = 0
        self.last_ok = time.monotonic()

    def restart(self) -> None:
        """Silence counts from now (a client started long after it was built)."""
        self.last_ok = time.monotonic()

    def answered(self) -> None:
        self.streak = 0
        self.last_ok = time.monotonic()

    def failed(self, refused: bool, dead_streak: int, refused_window: float,
               broken_window: float) -> str | None:
        """Count one failed request; a description of the silence once the server is dead."""
        self.streak += 1
        silent = time.monotonic() - self.last_ok
        window = refused_window if refused else broken_window
        if self.streak >= dead_streak and silent >= window:
            return f"{self.streak} failed requests in a row over {silent:.0f} s, none answered"
        return None
