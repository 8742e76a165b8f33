"""The MediaWiki API as a Wikipedia source: search, revisions at the epoch, exact-title lookup
and a revision's parsed HTML (spec fanoutqa.md §3), over :class:`~.wiki_http.WikiHTTP`.

An answer is the API's JSON; MediaWiki's ``maxlag``/``ratelimited`` errors are waited out as
rate limiting, ``readonly``/``internal_api_error`` retried, any other API error is a
:class:`WikipediaAPIError` against the one item; 401/403/404 mean a wrong ``api_url`` or a
blocked User-Agent (:class:`WikipediaRefused`, the run stops).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from mindprobe.resources.wiki_http import Answer, Retry, WikiHTTP, default_user_agent
from mindprobe.resources.wiki_types import (
    DEFAULT_API_URL,
    Evidence,
    TitleLookup,
    WikipediaAPIError,
    WikipediaError,
    WikipediaRefused,
)

__all__ = ["MediaWikiAPI", "MediaWikiSource", "default_user_agent"]

log = logging.getLogger(__name__)

#: MediaWiki error codes (prefixes) that mean "try again later", not "your request is wrong".
RETRYABLE_API_CODES = ("maxlag", "ratelimited", "readonly", "internal_api_error")
#: Of those, the ones that mean "you are asking too fast": waited out, never a dead source.
RATE_LIMIT_CODES = ("maxlag", "ratelimited")
FIXES = ("Serve a local Wikipedia with kiwix-serve and pass --wiki kiwix:http://HOST:PORT, or "
         "run evidenceprovided from a filled page cache with --wiki-cache DIR --offline, or "
         "check the network (and --wiki-api).")


class MediaWikiAPI(WikiHTTP):
    """GET requests to one ``api.php`` with ``format=json``."""

    def __init__(self, api_url: str = DEFAULT_API_URL, **transport: Any) -> None:
        super().__init__(f"the Wikipedia API at {api_url}", fixes=FIXES, **transport)
        self.api_url = api_url

    async def probe(self) -> None:
        """Is the API there? (a small siteinfo query; refusals stop the run here too)"""
        await super().probe(self.api_url, {"action": "query", "meta": "siteinfo",
                                           "format": "json"}, self._interpret)

    async def get(self, params: dict[str, str]) -> dict[str, Any]:
        """One API call; returns the decoded JSON object or raises as the module says."""
        return await self.request(self.api_url, {**params, "format": "json"}, self._interpret)

    def _interpret(self, answer: Answer) -> dict[str, Any]:
        if answer.status in (401, 403, 404):
            raise WikipediaRefused(
                f"the Wikipedia API at {self.api_url} answered HTTP {answer.status} "
                f"({answer.body[:200].decode('utf-8', 'replace')!r}); check api_url, and "
                f"that the User-Agent {self.user_agent!r} is acceptable"
            )
        if answer.status != 200:
            raise WikipediaError(f"Wikipedia API at {self.api_url}: HTTP {answer.status}")
        try:
            payload = json.loads(answer.body)
        except ValueError as exc:  # not UTF-8, not JSON: a proxy's error page, a cut body
            raise Retry(f"malformed response ({type(exc).__name__}: {exc})") from None
        if not isinstance(payload, dict):
            raise Retry("response is not a JSON object")
        error = payload.get("error")
        if not isinstance(error, dict):
            return payload
        code, info = str(error.get("code", "unknown")), str(error.get("info", ""))
        if not code.startswith(RETRYABLE_API_CODES):
            raise WikipediaAPIError(code, info)
        raise Retry(f"API error {code}: {info}", code.startswith(RATE_LIMIT_CODES))


class MediaWikiSource:
    """Dated English Wikipedia through the API: every page at its newest revision at or
    before ``epoch``."""

    kind = "api"

    def __init__(self, api: MediaWikiAPI, epoch: str) -> None:
        self.api, self.epoch = api, epoch

    @property
    def label(self) -> str:
        return self.api.api_url

    def identity(self) -> dict[str, Any]:
        return {"source": "api", "api_url": self.api.api_url}

    async def search(self, query: str, results: int) -> tuple[Evidence, ...]:
        payload = await self.api.get(
            {"action": "query", "list": "search", "srsearch": query, "srlimit": str(results)}
        )
        hits = (payload.get("query") or {}).get("search") or []
        return tuple(Evidence.from_title(int(h["pageid"]), str(h["title"])) for h in hits)

    async def revid(self, evidence: Evidence) -> int:
        payload = await self.api.get(
            {
                "action": "query",
                "prop": "revisions",
                "rvprop": "ids|timestamp",
                "rvlimit": "1",
                "pageids": str(evidence.pageid),
                "rvstart": self.epoch,
            }
        )
        page = ((payload.get("query") or {}).get("pages") or {}).get(str(evidence.pageid)) or {}
        revisions = page.get("revisions") or []
        if not revisions:
            raise WikipediaAPIError(
                "norevision",
                f"page {evidence.title!r} (pageid {evidence.pageid}) has no revision at or "
                f"before {self.epoch}" + (" (no such page)" if "missing" in page else ""),
            )
        return int(revisions[0]["revid"])

    async def html(self, evidence: Evidence, revid: int) -> str:
        payload = await self.api.get({"action": "parse", "oldid": str(revid), "prop": "text"})
        html = ((payload.get("parse") or {}).get("text") or {}).get("*")
        if html is None:
            log.warning("no text for %r (oldid %s); using an empty page", evidence.title, revid)
            return ""
        return str(html)

    async def lookup(self, title: str) -> TitleLookup:
        payload = await self.api.get(
            {
                "action": "query",
                "titles": title,
                "redirects": "1",
                "prop": "pageprops|revisions",
                "ppprop": "disambiguation",
                "rvprop": "ids|timestamp",
                "rvlimit": "1",
                "rvstart": self.epoch,
            }
        )
        pages = list(((payload.get("query") or {}).get("pages") or {}).values())
        page = pages[0] if pages else {}
        revisions = page.get("revisions") or []
        if "pageid" not in page or not revisions or "missing" in page or "invalid" in page:
            return TitleLookup(title, None)
        pageid, revid = int(page["pageid"]), int(revisions[0]["revid"])
        disambiguation = "disambiguation" in (page.get("pageprops") or {})
        return TitleLookup(title, Evidence.from_title(pageid, page["title"], revid), disambiguation)
