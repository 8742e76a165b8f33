"""HTTP to one Wikipedia source (a MediaWiki ``api.php`` or a ``kiwix-serve``): one session,
bounded concurrency, and the retry, rate-limit and dead-server rules every source shares.

A request ends in one of four ways: the answer the source's ``interpret`` accepts (returned);
:class:`WikipediaRefused` when the source refuses what no retry can fix (wrong URL, unknown
book, blocked User-Agent: the run stops); :class:`WikipediaUnreachable` when the source stopped
answering altogether (the run stops within seconds, naming the source and the fixes, as for a
dead model server: :class:`~mindprobe.core.retry.RetryPolicy`); :class:`WikipediaError`, recorded
against the one item, when bounded retries gave no usable answer.

Rate limiting is waited out politely: a 429, any answer with Retry-After, or an answer
``interpret`` flags as rate-limited (MediaWiki's ``maxlag``/``ratelimited``) waits at least as
long as asked, does not use up an attempt and never counts towards a dead source; only
:data:`RATE_LIMIT_PATIENCE` seconds of such waiting per request are allowed.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import aiohttp
from multidict import CIMultiDictProxy

from mindprobe.core.retry import RetryPolicy
from mindprobe.models.wire import RETRYABLE_STATUS, parse_retry_after
from mindprobe.resources.wiki_types import WikipediaError, WikipediaUnreachable
from mindprobe.version import __version__

log = logging.getLogger(__name__)

T = TypeVar("T")

CONTACT_ENV = "MINDPROBE_WIKI_CONTACT"
#: Placeholder for Wikimedia's User-Agent policy; users should name themselves (CONTACT_ENV).
DEFAULT_CONTACT = f"contact: set {CONTACT_ENV} to your email or project URL"
#: Seconds of rate-limit waits one request may spend before it counts as failed.
RATE_LIMIT_PATIENCE = 600.0
#: Seconds between the start's probes of a source that refuses them (shorter until the
#: failures make a streak the dead-server rule counts; then up to five times this).
PROBE_PAUSE = 0.1


def default_user_agent(contact: str | None = None) -> str:
    """Wikimedia's policy format: client/version (contact) library/version."""
    contact = contact or os.environ.get(CONTACT_ENV) or DEFAULT_CONTACT
    client = f"mindprobe/{__version__} (FanOutQA Wikipedia client; {contact})"
    return f"{client} aiohttp/{aiohttp.__version__}"


@dataclass(frozen=True)
class Answer:
    """One HTTP answer as ``interpret`` sees it."""

    status: int
    body: bytes
    headers: CIMultiDictProxy[str]


class Retry(Exception):
    """Raised by ``interpret``: this answer is worth another try (``rate_limited``: politely)."""

    def __init__(self, why: str, rate_limited: bool = False) -> None:
        super().__init__(why)
        self.why, self.rate_limited = why, rate_limited


class WikiHTTP:
    """GET requests to one source, retried until ``interpret`` accepts an answer or give-up.

    At most ``max_concurrency`` requests are in the air at once; each gets ``timeout`` seconds
    and up to ``max_attempts`` tries with jittered exponential backoff on connection errors,
    timeouts, retryable HTTP statuses (5xx ...) and answers ``interpret`` retries. A
    Retry-After header is a floor on the wait. ``name`` is how messages call the source.
    """

    def __init__(
        self,
        name: str,
        *,
        fixes: str,
        max_concurrency: int = 4,
        timeout: float = 30.0,
        max_attempts: int = 5,
        backoff_base: float = 1.0,
        backoff_max: float = 30.0,
        user_agent: str | None = None,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
        self.name, self.fixes = name, fixes
        self.max_concurrency = max_concurrency
        self.timeout = timeout
        #: Attempts, backoff and when the source counts as dead (`core.retry`): a short
        #: outage for refused connections and unknown hosts (no Wikipedia answers in seconds),
        #: a minute for 5xx and timeouts.
        self.retry = RetryPolicy(max_attempts, backoff_base, backoff_max, dead_streak=6,
                                 refused_window=5.0, broken_window=60.0)
        self.user_agent = user_agent or default_user_agent()
        self._session: aiohttp.ClientSession | None = None
        self._slots = asyncio.Semaphore(max_concurrency)
        self._dead: WikipediaUnreachable | None = None

    async def start(self) -> None:
        if self._session is None:
            self.retry.started()
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self.max_concurrency, ttl_dns_cache=300),
                timeout=aiohttp.ClientTimeout(total=self.timeout),
                headers={"User-Agent": self.user_agent},
            )

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def request(self, url: str, params: dict[str, str] | None,
                      interpret: Callable[[Answer], T], *, redirects: bool = True) -> T:
        """One GET; ``interpret`` turns an answer into the result, raises Retry, or raises
        what the source means (WikipediaRefused, WikipediaAPIError ...)."""
        if self._session is None:
            raise RuntimeError(
                "the Wikipedia client is not started; await start() or use async with"
            )
        last, attempt, patience = "no attempt made", 0, RATE_LIMIT_PATIENCE
        unreachable = False
        while True:
            if self._dead is not None:  # a fresh exception: one instance raised in many
                raise WikipediaUnreachable(str(self._dead))  # tasks would chain tracebacks
            wait_at_least: float | None = None
            rate_limited = unreachable = False
            try:
                async with self._slots, self._session.get(
                        url, params=params, allow_redirects=redirects) as resp:
                    answer = Answer(resp.status, await resp.read(), resp.headers)
                wait_at_least = parse_retry_after(answer.headers.get("Retry-After"))
                rate_limited = answer.status == 429 or wait_at_least is not None
                if answer.status in RETRYABLE_STATUS or answer.status == 429:
                    raise Retry(f"HTTP {answer.status}", rate_limited)
                result = interpret(answer)
                self.retry.answered()
                return result
            except Retry as exc:
                last = exc.why
                rate_limited = rate_limited or exc.rate_limited
                if rate_limited:
                    self.retry.answered()  # the source is there, only busy
            except (TimeoutError, aiohttp.ClientError, OSError) as exc:
                last = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                unreachable = isinstance(exc, (aiohttp.ClientConnectorError, OSError))
            if not rate_limited:
                self._note_failure(last, unreachable)
                attempt += 1
                if self.retry.exhausted(attempt):
                    break
            delay = self.retry.delay(attempt if not rate_limited else 0, wait_at_least)
            if rate_limited:
                patience -= delay
                if patience < 0:
                    break
            log.info("%s: request failed (%s); retrying in %.1fs", self.name, last, delay)
            await asyncio.sleep(delay)
        if patience < 0:
            raise WikipediaError(f"{self.name} still asks to slow down after "
                                 f"{RATE_LIMIT_PATIENCE:.0f} s of waiting: {last}")
        raise WikipediaError(
            f"{self.name} gave no usable answer after {attempt} attempts: {last}",
            "connection" if unreachable else "other",
        )

    async def probe(self, url: str, params: dict[str, str] | None,
                    interpret: Callable[[Answer], T]) -> T | None:
        """One request before the run starts: a source that nothing answers (no network,
        nothing listening) stops the run before any model is loaded, by the policy's
        dead-server rule (its refused window); any HTTP answer is ``interpret``'s to judge (a
        5xx or 429 is a source that is there: the run starts and its requests ride it out)."""
        if self._session is None:
            raise RuntimeError("start() the transport before probing it")
        try:
            return await self._probe(url, params, interpret)
        finally:
            self.retry.started()  # the requests' failures count from a fresh start

    async def _probe(self, url: str, params: dict[str, str] | None,
                     interpret: Callable[[Answer], T]) -> T | None:
        assert self._session is not None
        while True:
            try:
                async with self._slots, self._session.get(url, params=params) as resp:
                    answer = Answer(resp.status, await resp.read(), resp.headers)
                if answer.status in RETRYABLE_STATUS or answer.status == 429:
                    return None
                try:
                    return interpret(answer)
                except (Retry, WikipediaError):  # it answered: there; its requests retry
                    return None
            except (aiohttp.ClientConnectorError, OSError) as exc:
                last = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            except (TimeoutError, aiohttp.ClientError):
                return None  # there, if slow: its requests retry
            dead = self.retry.failed(refused=True)
            if dead:
                self._dead = WikipediaUnreachable(
                    f"Wikipedia cannot be reached: {self.name} does not answer ({dead}; "
                    f"last: {last}). {self.fixes}")
                raise self._dead
            left = self.retry.outage_left()  # None until the streak is long enough
            await asyncio.sleep(PROBE_PAUSE if left is None else min(PROBE_PAUSE * 5, left))

    def _note_failure(self, last: str, refused: bool) -> None:
        dead = self.retry.failed(refused)
        if dead:
            self._dead = WikipediaUnreachable(
                f"Wikipedia cannot be reached: {self.name} stopped answering ({dead}; last: "
                f"{last}). {self.fixes}")
            raise self._dead

