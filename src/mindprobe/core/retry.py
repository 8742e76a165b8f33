"""One retry policy for every HTTP client (model servers, endpoint routing, Wikipedia).

`RetryPolicy` is what each client holds: how many attempts a request gets, how long to wait
between them (`backoff_delay`: jittered exponential, a Retry-After as floor) and when its server
counts as dead (`Liveness`). The clients differ only in what they send and how they read an
answer; the router's endpoint cooldowns use the same backoff, and its "every endpoint is down"
stop, the Wikipedia probe and the runner's safety net for models without a policy of their own
are the same `Liveness` rule with their own thresholds.
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
    """When a server counts as dead: one rule for every client (a model server, the endpoints
    of a router as a pool, Wikipedia, the runner's items as a last safety net).

    A run should stop with one message instead of failing every remaining item slowly; a
    restart or a short outage should be ridden out. So a server is dead only after
    ``dead_streak`` failures in a row *and* an outage of ``refused_window`` seconds when nothing
    answers at all (refused connections, unknown host), ``broken_window`` for 5xx, timeouts and
    garbled bodies. The outage counts from the first failure of the streak, not from the last
    good answer: a generation that took minutes, followed by a restart, still gets its whole
    window. Any good answer ends the outage. Rate-limit answers (429, Retry-After, MediaWiki's
    maxlag) are the server at work and are never reported here.
    """

    def __init__(self) -> None:
        self.streak = 0
        #: When the streak's first failure came (None: no failure since the last answer).
        self.since: float | None = None
        #: Whether the streak's last failure was a refused connection (which window applies).
        self.refused = False

    def restart(self) -> None:
        """Forget failures of an earlier start (a client started again)."""
        self.streak, self.since = 0, None

    def answered(self) -> None:
        self.streak, self.since = 0, None

    def failed(self, refused: bool, dead_streak: int, refused_window: float,
               broken_window: float) -> str | None:
        """Count one failure; a description of the outage once the server is dead."""
        if self.since is None:
            self.since = time.monotonic()
        self.streak += 1
        self.refused = refused
        return self.dead(dead_streak, refused_window, broken_window)

    def left(self, dead_streak: int, refused_window: float, broken_window: float
             ) -> float | None:
        """Seconds the outage has still to last before the server is dead (0: dead now);
        None while there is no streak of `dead_streak` failures."""
        if self.since is None or self.streak < dead_streak:
            return None
        window = refused_window if self.refused else broken_window
        return max(0.0, self.since + window - time.monotonic())

    def dead(self, dead_streak: int, refused_window: float, broken_window: float
             ) -> str | None:
        """A description of the outage if the server is dead by now, else None."""
        if self.left(dead_streak, refused_window, broken_window) != 0.0:
            return None
        assert self.since is not None
        return (f"{self.streak} failed requests in a row over "
                f"{time.monotonic() - self.since:.0f} s, none answered")


@dataclass
class RetryPolicy:
    """How one client retries a request and when its server counts as dead.

    `max_attempts` tries per request, `backoff_base`/`backoff_max` for the waits between them;
    `dead_streak`, `refused_window` and `broken_window` are the `Liveness` rule's thresholds
    (failed requests in a row, and seconds of outage when nothing answers / when answers are
    broken). The state of that rule lives here too, so a client has one object to ask.
    """

    #: Tries per request (the first one included).
    max_attempts: int = 6
    #: The wait after attempt n is up to min(backoff_max, backoff_base·2^n) seconds.
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    #: Dead: this many failed requests in a row, and an outage (from the first of them, no good
    #: answer since) of `refused_window` seconds when nothing answers at all, `broken_window`
    #: when answers are broken.
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
        """A fresh start: failures of an earlier one do not count."""
        self.liveness.restart()

    def answered(self) -> None:
        self.liveness.answered()

    def failed(self, refused: bool) -> str | None:
        """Count one failed request (never a rate-limit answer: that is the server at work);
        a description of the outage once the server counts as dead."""
        return self.liveness.failed(refused, self.dead_streak, self.refused_window,
                                    self.broken_window)

    def dead(self) -> str | None:
        """The outage's description if the server is dead by now (no failure counted)."""
        return self.liveness.dead(self.dead_streak, self.refused_window, self.broken_window)

    def outage_left(self) -> float | None:
        """Seconds until the server counts as dead if nothing answers (None: no outage yet,
        or too short a streak for the window to matter)."""
        return self.liveness.left(self.dead_streak, self.refused_window, self.broken_window)
