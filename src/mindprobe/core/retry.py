"""One retry policy for every HTTP client (model servers, endpoint routing, Wikipedia).

`RetryPolicy` is what each client holds: how many attempts a request gets, how long to wait
between them (`backoff_delay`: jittered exponential, a Retry-After as floor) and when its server
counts as dead (`Liveness`). The clients differ only in what they send and how they read an
answer; the router's endpoint cooldowns use the same backoff.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field

#: How long a server's Retry-After may hold one request back.
MAX_RETRY_AFTER = 120.0


def backoff_delay(rng: random.Random, attempt: int, base: float, cap: float,
                  retry_after: float | None = None, jitter: float = 0.5) -> float:
    """Jittered exponential backoff (`1 - jitter` to all of min(cap, base·2^attempt)); a
    server's Retry-After (capped at MAX_RETRY_AFTER) is a floor, not a suggestion."""
    ceiling = min(cap, base * 2.0**attempt)
    wait = rng.uniform(ceiling * (1.0 - jitter), ceiling)
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


@dataclass
class RetryPolicy:
    """How one client retries a request and when its server counts as dead.

    `max_attempts` tries per request, `backoff_base`/`backoff_max` for the waits between them;
    `dead_streak`, `refused_window` and `broken_window` are the `Liveness` rule's thresholds
    (failed requests in a row, and seconds of silence when nothing answers / when answers are
    broken). The state of that rule lives here too, so a client has one object to ask.
    """

    #: Tries per request (the first one included).
    max_attempts: int = 6
    #: The wait after attempt n is up to min(backoff_max, backoff_base·2^n) seconds.
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    #: Dead: this many failed requests in a row, and no good answer for `refused_window`
    #: seconds when nothing answers at all, `broken_window` when answers are broken.
    dead_streak: int = 24
    refused_window: float = 8.0
    broken_window: float = 60.0
    rng: random.Random = field(default_factory=random.Random, repr=False)
    liveness: Liveness = field(default_factory=Liveness, repr=False)

    def __post_init__(self) -> None:
        self.max_attempts = max(1, self.max_attempts)

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt number `attempt` (0-based)."""
        return backoff_delay(self.rng, attempt, self.backoff_base, self.backoff_max,
                             retry_after)

    async def wait(self, attempt: int, retry_after: float | None = None) -> float:
        """Sleep the backoff of `attempt`; returns how long."""
        delay = self.delay(attempt, retry_after)
        await asyncio.sleep(delay)
        return delay

    def exhausted(self, attempts: int) -> bool:
        """True once `attempts` attempts were made: give up."""
        return attempts >= self.max_attempts

    def started(self) -> None:
        """Silence counts from now (a client started long after it was built)."""
        self.liveness.restart()

    def answered(self) -> None:
        self.liveness.answered()

    def failed(self, refused: bool) -> str | None:
        """Count one failed request (never a rate-limit answer: that is the server at work);
        a description of the silence once the server counts as dead."""
        return self.liveness.failed(refused, self.dead_streak, self.refused_window,
                                    self.broken_window)
