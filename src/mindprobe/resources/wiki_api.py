"""Transport to a MediaWiki API: one aiohttp session, bounded concurrency, retries.

A call ends in one of three ways: the API's JSON (returned); :class:`WikipediaRefused`, which
stops the run, when the endpoint refuses every request (401/403/404: wrong URL or blocked
User-Agent); :class:`WikipediaError`, which the runner records against the one item, when no
usable answer came after bounded retries or the API reported an error (WikipediaAPIError).
The error types live in :mod:`mindprobe.resources.wikipedia`, which imports this module only
when a client is built, so importing them does not load aiohttp.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
from typing import Any

import aiohttp

from mindprobe import __version__
from mindprobe.core.retry import backoff_delay
from mindprobe.models.wire import RETRYABLE_STATUS, parse_retry_after
from mindprobe.resources.wikipedia import (
    DEFAULT_API_URL,
    WikipediaAPIError,
    WikipediaError,
    WikipediaRefused,
)

log = logging.getLogger(__name__)

CONTACT_ENV = "MINDPROBE_WIKI_CONTACT"
#: Placeholder for Wikimedia's User-Agent policy; users should name themselves (CONTACT_ENV).
DEFAULT_CONTACT = f"contact: set {CONTACT_ENV} to your email or project URL"
#: MediaWiki error codes (prefixes) that mean "try again later", not "your request is wrong".
RETRYABLE_API_CODES = ("maxlag", "ratelimited", "readonly", "internal_api_error")


def default_user_agent(contact: str | None = None) -> str:
    """Wikimedia's policy format: client/version (contact) library/version."""
    contact = contact or os.environ.get(CONTACT_ENV) or DEFAULT_CONTACT
    client = f"mindprobe/{__version__} (FanOutQA Wikipedia client; {contact})"
    return f"{client} aiohttp/{aiohttp.__version__}"


class MediaWikiAPI:
    """GET requests to one ``api.php`` with ``format=json``, retried until an answer or give-up.

    At most ``max_concurrency`` requests are in the air at once; each gets ``timeout`` seconds
    and up to ``max_attempts`` tries with jittered exponential backoff on connection errors,
    timeouts, retryable HTTP statuses (429, 5xx, ...), garbled bodies and MediaWiki's
    maxlag/ratelimited/readonly errors. A Retry-After header is a floor on the wait.
    """

    def __init__(
        self,
        api_url: str = DEFAULT_API_URL,
        *,
        max_concurrency: int = 4,
        timeout: float = 30.0,
        max_attempts: int = 5,
        backoff_base: float = 1.0,
        backoff_max: float = 30.0,
        user_agent: str | None = None,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
        self.api_url = api_url
        self.max_concurrency = max_concurrency
        self.timeout = timeout
        self.max_attempts = max(1, max_attempts)
        self.backoff_base, self.backoff_max = backoff_base, backoff_max
        self.user_agent = user_agent or default_user_agent()
        self._session: aiohttp.ClientSession | None = None
        self._slots = asyncio.Semaphore(max_concurrency)
        self._rng = random.Random()

    async def start(self) -> None:
        if self._session is None:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self.max_concurrency, ttl_dns_cache=300),
                timeout=aiohttp.ClientTimeout(total=self.timeout),
                headers={"User-Agent": self.user_agent},
            )

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def get(self, params: dict[str, str]) -> dict[str, Any]:
        """One API call; returns the decoded JSON object or raises as the module says."""
        if self._session is None:
            raise RuntimeError(
                "the Wikipedia client is not started; await start() or use async with"
            )
        query = {**params, "format": "json"}
        last = "no attempt made"
        unreachable = False
        for attempt in range(self.max_attempts):
            wait_at_least: float | None = None
            unreachable = False
            try:
                async with self._slots, self._session.get(self.api_url, params=query) as resp:
                    status, body = resp.status, await resp.read()
                    wait_at_least = parse_retry_after(resp.headers.get("Retry-After"))
                if status == 200:
                    payload, last = self._decode(body)
                    if payload is not None:
                        return payload
                else:
                    last = self._check_status(status, body)
            except (TimeoutError, aiohttp.ClientError, OSError) as exc:
                last = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                unreachable = isinstance(exc, (aiohttp.ClientConnectorError, OSError))
            if attempt + 1 < self.max_attempts:
                delay = self._backoff(attempt, wait_at_least)
                log.info("Wikipedia request failed (%s); retrying in %.1fs", last, delay)
                await asyncio.sleep(delay)
        raise WikipediaError(
            f"Wikipedia API at {self.api_url} gave no usable answer after "
            f"{self.max_attempts} attempts: {last}", "connection" if unreachable else "other"
        )

    def _decode(self, body: bytes) -> tuple[dict[str, Any] | None, str]:
        """(payload, "") for a good answer, (None, why) for one worth retrying; else raise."""
        try:
            payload = json.loads(body)
        except ValueError as exc:  # not UTF-8, not JSON: a proxy's error page, a cut body
            return None, f"malformed response ({type(exc).__name__}: {exc})"
        if not isinstance(payload, dict):
            return None, "response is not a JSON object"
        error = payload.get("error")
        if not isinstance(error, dict):
            return payload, ""
        code, info = str(error.get("code", "unknown")), str(error.get("info", ""))
        if not code.startswith(RETRYABLE_API_CODES):
            raise WikipediaAPIError(code, info)
        return None, f"API error {code}: {info}"

    def _check_status(self, status: int, body: bytes) -> str:
        """Why a non-200 answer is worth retrying; raise when it is not."""
        if status in (401, 403, 404):
            raise WikipediaRefused(
                f"the Wikipedia API at {self.api_url} answered HTTP {status} "
                f"({body[:200].decode('utf-8', 'replace')!r}); check api_url, and "
                f"that the User-Agent {self.user_agent!r} is acceptable"
            )
        if status not in RETRYABLE_STATUS:
            raise WikipediaError(f"Wikipedia API at {self.api_url}: HTTP {status}")
        return f"HTTP {status}"

    def _backoff(self, attempt: int, wait_at_least: float | None) -> float:
        return backoff_delay(self._rng, attempt, self.backoff_base, self.backoff_max,
                             wait_at_least)
