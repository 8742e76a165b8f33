"""Dated English Wikipedia for FanOutQA: search, revision lookup and page text (spec §3).

Every page is read as its newest revision at or before the dataset epoch (2023-11-20), converted
to Markdown (:mod:`mindprobe.resources.wiki_markdown`) and cached as ``{pageid}-dated.md`` under
the cache root, the layout of upstream's prebuilt cache archive, so that archive can be unpacked
there and used as is. Cache root: the ``cache_dir`` argument, else ``MINDPROBE_FANOUTQA_CACHE``,
else ``~/.cache/fanoutqa/wikicache``.

Errors: a cache miss in offline mode is a :class:`~mindprobe.errors.DataError` (stops the run,
naming the fix); an endpoint that refuses every request (401/403/404) is
:class:`WikipediaRefused` (a MindprobeError, stops the run); anything else that fails after
bounded retries, or an API error, is :class:`WikipediaError`, a
:class:`~mindprobe.models.base.TransientError`: the runner records that item as errored and goes
on. Importing this module is light (no aiohttp, no bs4) until a client is built.
"""

from __future__ import annotations

import asyncio
import logging
import os
import tempfile
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, replace
from importlib.metadata import version
from pathlib import Path
from typing import Any
from urllib.parse import quote

from mindprobe.errors import DataError, MindprobeError
from mindprobe.models.base import TransientError

__all__ = [
    "EPOCH",
    "Evidence",
    "TitleLookup",
    "WikipediaAPIError",
    "WikipediaClient",
    "WikipediaError",
    "WikipediaRefused",
    "wiki_cache_dir",
]

log = logging.getLogger(__name__)

DEFAULT_API_URL = "https://en.wikipedia.org/w/api.php"
PAGE_URL = "https://en.wikipedia.org/wiki/"
#: The dataset epoch, sent in exactly this ISO form as ``rvstart``.
EPOCH = "2023-11-20T00:00:00+00:00"
CACHE_ENV = "MINDPROBE_FANOUTQA_CACHE"
DEFAULT_CACHE_DIR = Path("~/.cache/fanoutqa/wikicache")


class WikipediaError(TransientError):
    """Wikipedia gave no usable answer after bounded retries, or answered with an API error.

    A TransientError: the runner records the item with this message and carries on.
    """


class WikipediaAPIError(WikipediaError):
    """The API answered, but with an error (``code`` as MediaWiki names it, e.g. nosuchrevid)."""

    def __init__(self, code: str, info: str) -> None:
        super().__init__(f"Wikipedia API error {code}: {info}")
        self.code, self.info = code, info


class WikipediaRefused(MindprobeError):
    """The endpoint refuses every request (wrong ``api_url``, blocked User-Agent); stops the run."""


@dataclass(frozen=True)
class Evidence:
    """One Wikipedia page; ``revid`` is the revision at the epoch (None until resolved)."""

    pageid: int
    revid: int | None
    title: str
    url: str

    @classmethod
    def from_title(cls, pageid: int, title: str, revid: int | None = None) -> Evidence:
        """An Evidence with the URL built as upstream's search does (spaces become %20)."""
        return cls(pageid=pageid, revid=revid, title=title, url=PAGE_URL + quote(title))


@dataclass(frozen=True)
class TitleLookup:
    """An exact-title lookup: ``evidence`` is None when no page had that title at the epoch."""

    query: str
    evidence: Evidence | None
    disambiguation: bool = False


def wiki_cache_dir(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The cache root: the argument, else $MINDPROBE_FANOUTQA_CACHE, else upstream's default."""
    chosen = cache_dir if cache_dir is not None else os.environ.get(CACHE_ENV) or DEFAULT_CACHE_DIR
    return Path(chosen).expanduser()


class WikipediaClient:
    """Wikipedia at the epoch: search, revisions, exact-title lookup and cached page Markdown.

    ``await start()`` before use (or ``async with``), ``await close()`` after; transport,
    concurrency limit, timeout and retries are :class:`~mindprobe.resources.wiki_api.MediaWikiAPI`'s
    (arguments passed through). ``user_agent`` replaces the whole User-Agent; ``contact`` (or
    $MINDPROBE_WIKI_CONTACT) only fills the contact slot of the default one. Concurrent calls for
    the same page, revision, lookup or search share one request; all but page text (which the
    disk cache holds) are memoised for the client's lifetime. ``offline`` never touches the
    network: pages come from the cache or raise DataError.
    """

    def __init__(
        self,
        *,
        api_url: str = DEFAULT_API_URL,
        cache_dir: str | os.PathLike[str] | None = None,
        offline: bool = False,
        max_concurrency: int = 4,
        timeout: float = 30.0,
        max_attempts: int = 5,
        backoff_base: float = 1.0,
        backoff_max: float = 30.0,
        user_agent: str | None = None,
        contact: str | None = None,
        epoch: str = EPOCH,
    ) -> None:
        # aiohttp loads only once a client is built: importing this module for Evidence and
        # the error types keeps light commands (``mindprobe list``) light.
        from mindprobe.resources.wiki_api import MediaWikiAPI, default_user_agent

        self.cache_dir = wiki_cache_dir(cache_dir)
        self.offline = offline
        self.epoch = epoch
        self.api = MediaWikiAPI(
            api_url,
            max_concurrency=max_concurrency,
            timeout=timeout,
            max_attempts=max_attempts,
            backoff_base=backoff_base,
            backoff_max=backoff_max,
            user_agent=user_agent or default_user_agent(contact),
        )
        self._revids: dict[int, int] = {}
        #: In-flight calls, and finished ones worth remembering (see _once).
        self._tasks: dict[tuple[str, Hashable], asyncio.Future[Any]] = {}

    @property
    def api_url(self) -> str:
        return self.api.api_url

    @property
    def user_agent(self) -> str:
        return self.api.user_agent

    # -- lifecycle -------------------------------------------------------------------------
    async def start(self) -> None:
        """Open the HTTP session (not needed, and not opened, in offline mode)."""
        if not self.offline:
            await self.api.start()

    async def close(self) -> None:
        await self.api.close()

    async def __aenter__(self) -> WikipediaClient:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def identity(self) -> dict[str, Any]:
        """What a run should record about where its pages came from."""
        return {
            "api_url": self.api_url,
            "epoch": self.epoch,
            "cache_dir": str(self.cache_dir),
            "offline": self.offline,
            "markdownify": version("markdownify"),
        }

    # -- public API ------------------------------------------------------------------------
    async def search(self, query: str, results: int = 10) -> list[Evidence]:
        """Full-text search; hits come back with ``revid=None`` (see :meth:`revid`)."""
        hits = await self._once("search", (query, results), lambda: self._search(query, results))
        return list(hits)

    async def revid(self, evidence: Evidence) -> int:
        """The page's newest revision at or before the epoch (memoised per pageid)."""
        if evidence.revid is not None:
            return evidence.revid
        known = self._revids.get(evidence.pageid)
        if known is not None:
            return known
        return await self._once("revid", evidence.pageid, lambda: self._revid(evidence))

    async def resolve(self, evidence: Evidence) -> Evidence:
        """The same Evidence with ``revid`` filled in."""
        return replace(evidence, revid=await self.revid(evidence))

    async def content(self, evidence: Evidence) -> str:
        """The page's Markdown at the epoch: from the cache, else fetched, converted and cached."""
        cached = self._read_cache(evidence)
        if cached is not None:
            return cached
        if self.offline:
            raise DataError(
                f"Wikipedia page {evidence.title!r} (pageid {evidence.pageid}) is not in the "
                f"offline cache {self.cache_dir} (no {self.cache_path(evidence.pageid).name}). "
                "Fill it by running once with network access (offline mode off), or unpack "
                "upstream's prebuilt FanOutQA wikicache archive there (or point "
                f"{CACHE_ENV} at where it is)."
            )
        return await self._once(
            "content", evidence.pageid, lambda: self._fetch_content(evidence), keep=False
        )

    async def lookup(self, title: str) -> TitleLookup:
        """Resolve an exact page title at the epoch (redirects followed; memoised per title).

        Current redirects and disambiguation flags are used (the API has no dated view of
        them); the page must have a revision at or before the epoch to count as found.
        """
        if not title.strip() or "|" in title:  # "|" would ask for several pages at once
            return TitleLookup(title, None)
        return await self._once("lookup", title, lambda: self._lookup(title))

    async def disambiguation_options(self, evidence: Evidence) -> list[str]:
        """Titles a disambiguation page offers: the first article link of each list item."""
        options = await self._once("options", evidence.pageid, lambda: self._options(evidence))
        return list(options)

    def cache_path(self, pageid: int) -> Path:
        return self.cache_dir / f"{pageid}-dated.md"

    # -- requests --------------------------------------------------------------------------
    async def _search(self, query: str, results: int) -> tuple[Evidence, ...]:
        payload = await self._query(
            {"action": "query", "list": "search", "srsearch": query, "srlimit": str(results)}
        )
        hits = (payload.get("query") or {}).get("search") or []
        return tuple(Evidence.from_title(int(h["pageid"]), str(h["title"])) for h in hits)

    async def _revid(self, evidence: Evidence) -> int:
        payload = await self._query(
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
        self._revids[evidence.pageid] = revid = int(revisions[0]["revid"])
        return revid

    async def _html(self, evidence: Evidence) -> str:
        revid = await self.revid(evidence)
        payload = await self._query({"action": "parse", "oldid": str(revid), "prop": "text"})
        html = ((payload.get("parse") or {}).get("text") or {}).get("*")
        if html is None:
            log.warning("no text for %r (oldid %s); using an empty page", evidence.title, revid)
            return ""
        return str(html)

    async def _fetch_content(self, evidence: Evidence) -> str:
        html = await self._html(evidence)
        return await asyncio.to_thread(self._convert_and_store, evidence.pageid, html)

    async def _options(self, evidence: Evidence) -> tuple[str, ...]:
        from mindprobe.resources.wiki_markdown import list_item_links  # bs4: loaded on use

        html = await self._html(evidence)
        if not self.cache_path(evidence.pageid).exists():  # the page text comes for free
            await asyncio.to_thread(self._convert_and_store, evidence.pageid, html)
        return tuple(list_item_links(html))

    async def _lookup(self, title: str) -> TitleLookup:
        payload = await self._query(
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
        self._revids[pageid] = revid
        disambiguation = "disambiguation" in (page.get("pageprops") or {})
        return TitleLookup(title, Evidence.from_title(pageid, page["title"], revid), disambiguation)

    async def _query(self, params: dict[str, str]) -> dict[str, Any]:
        if self.offline:
            what = params.get("list") or params.get("prop") or params.get("action")
            raise DataError(
                f"offline mode: cannot ask Wikipedia ({what}); only cached page text is "
                "available offline (search and title lookup need network access)"
            )
        return await self.api.get(params)

    def _once(
        self,
        kind: str,
        key: Hashable,
        make: Callable[[], Awaitable[Any]],
        *,
        keep: bool = True,
    ) -> Awaitable[Any]:
        """Share one in-flight call per (kind, key); with ``keep``, also its later result."""
        slot = (kind, key)
        task = self._tasks.get(slot)
        if task is None:
            task = self._tasks[slot] = asyncio.ensure_future(make())

            def settle(finished: asyncio.Future[Any]) -> None:
                # Reading the exception also marks it retrieved when every waiter was cancelled.
                if not keep or finished.cancelled() or finished.exception() is not None:
                    self._tasks.pop(slot, None)

            task.add_done_callback(settle)
        # shield: one caller's cancellation (e.g. its item timed out) must not fail the others.
        return asyncio.shield(task)

    # -- cache -----------------------------------------------------------------------------
    def _read_cache(self, evidence: Evidence) -> str | None:
        path = self.cache_path(evidence.pageid)
        try:
            return path.read_bytes().decode("utf-8")
        except FileNotFoundError:
            return None
        except UnicodeDecodeError as exc:
            if self.offline:
                raise DataError(
                    f"cached page {path} ({evidence.title!r}) is not valid UTF-8 ({exc}); delete "
                    "it and run once with network access to fetch it again"
                ) from None
            log.warning("cached page %s is not valid UTF-8 (%s); fetching it again", path, exc)
            return None

    def _convert_and_store(self, pageid: int, html: str) -> str:
        """HTML -> Markdown, written atomically so readers never see half a file."""
        from mindprobe.resources.wiki_markdown import html_to_markdown  # bs4: loaded on use

        data = html_to_markdown(html).encode("utf-8", "replace")
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        final = self.cache_path(pageid)
        fd, tmp = tempfile.mkstemp(prefix=f".{final.name}.", suffix=".tmp", dir=self.cache_dir)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, final)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return data.decode("utf-8")
