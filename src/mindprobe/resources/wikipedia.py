"""Dated English Wikipedia for FanOutQA: search, title lookup and page text (spec §3).

Two sources behind one client: the MediaWiki API (:mod:`.wiki_api`; every page read as its
newest revision at or before the dataset epoch, 2023-11-20) or a local ``kiwix-serve``
(:mod:`.wiki_kiwix`; the September 2023 ZIM archive upstream recommends). Either way a page is
converted to Markdown (:mod:`mindprobe.resources.wiki_markdown`) and cached as
``{pageid}-dated.md`` under the cache root, the layout of upstream's prebuilt cache archive, so
that archive can be unpacked there and used as is (a Kiwix page without a page id is cached as
``title-{sha1 of the title}-dated.md``). Cache root: the ``cache_dir`` argument, else
``MINDPROBE_FANOUTQA_CACHE``, else ``~/.cache/fanoutqa/wikicache`` (a Kiwix source's default
is its own ``kiwix/{book}`` folder inside it, so the two sources' texts never mix unasked).
Every page text says where it came from (:class:`Page`: ``cache``, ``api`` or ``kiwix``).

Errors: a cache miss in offline mode is a :class:`~mindprobe.errors.DataError` (stops the run,
naming the fix); a source that refuses every request (401/403/404, an unknown Kiwix book) is
:class:`WikipediaRefused`, and one that stopped answering is :class:`WikipediaUnreachable`
(both MindprobeErrors: the run stops with one message, records kept); anything else that fails
after bounded retries, or an API error, is :class:`WikipediaError`, a
:class:`~mindprobe.core.model.TransientError`: the runner records that item as errored and
goes on. Importing this module is light (no aiohttp, no bs4) until a client is built.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import replace
from importlib.metadata import version
from pathlib import Path
from typing import Any

from mindprobe.errors import DataError
from mindprobe.resources.wiki_types import (
    DEFAULT_API_URL,
    EPOCH,
    Evidence,
    Page,
    TitleLookup,
    WikipediaAPIError,
    WikipediaError,
    WikipediaRefused,
    WikipediaUnreachable,
)

__all__ = [
    "DEFAULT_API_URL",
    "EPOCH",
    "Evidence",
    "Page",
    "TitleLookup",
    "WikipediaAPIError",
    "WikipediaClient",
    "WikipediaError",
    "WikipediaRefused",
    "WikipediaUnreachable",
    "wiki_cache_dir",
]

log = logging.getLogger(__name__)

CACHE_ENV = "MINDPROBE_FANOUTQA_CACHE"
DEFAULT_CACHE_DIR = Path("~/.cache/fanoutqa/wikicache")


def wiki_cache_dir(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The cache root: the argument, else $MINDPROBE_FANOUTQA_CACHE, else upstream's default."""
    chosen = cache_dir if cache_dir is not None else os.environ.get(CACHE_ENV) or DEFAULT_CACHE_DIR
    return Path(chosen).expanduser()


class WikipediaClient:
    """Wikipedia at the epoch: search, exact-title lookup and cached page Markdown.

    ``await start()`` before use (or ``async with``), ``await close()`` after. The source is the
    MediaWiki API at ``api_url`` unless ``kiwix_url`` names a kiwix-serve (book ``kiwix_book``,
    else $MINDPROBE_KIWIX_BOOK, else upstream's ``wikipedia_en_all_nopic_2023-09``); transport,
    concurrency limit, timeout and retries are :class:`~mindprobe.resources.wiki_http.WikiHTTP`'s
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
        kiwix_url: str | None = None,
        kiwix_book: str | None = None,
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
        from mindprobe.resources.wiki_http import default_user_agent

        transport = dict(max_concurrency=max_concurrency, timeout=timeout,
                         max_attempts=max_attempts, backoff_base=backoff_base,
                         backoff_max=backoff_max,
                         user_agent=user_agent or default_user_agent(contact))
        self.offline = offline
        self.epoch = epoch
        self.source: Any
        if kiwix_url:
            from mindprobe.resources.wiki_kiwix import (
                BOOK_ENV,
                DEFAULT_BOOK,
                KiwixHTTP,
                KiwixSource,
            )

            book = kiwix_book or os.environ.get(BOOK_ENV) or DEFAULT_BOOK
            self.api = KiwixHTTP(kiwix_url, book, **transport)
            self.source = KiwixSource(self.api)
            default_root = wiki_cache_dir() / "kiwix" / book
        else:
            from mindprobe.resources.wiki_api import MediaWikiAPI, MediaWikiSource

            self.api = MediaWikiAPI(api_url, **transport)
            self.source = MediaWikiSource(self.api, epoch)
            default_root = wiki_cache_dir()
        from mindprobe.resources.wiki_cache import PageCache

        self.cache = PageCache(
            wiki_cache_dir(cache_dir) if cache_dir is not None else default_root, offline)
        self._revids: dict[int, int] = {}
        #: In-flight calls, and finished ones worth remembering (see _once).
        self._tasks: dict[tuple[str, Hashable], asyncio.Future[Any]] = {}

    @property
    def api_url(self) -> str:
        return getattr(self.api, "api_url", None) or self.api.url

    @property
    def user_agent(self) -> str:
        return self.api.user_agent

    @property
    def cache_dir(self) -> Path:
        return self.cache.root

    @property
    def source_label(self) -> str:
        """How messages and records name the source (the API URL, or kiwix:URL and book)."""
        return self.source.label

    # -- lifecycle -------------------------------------------------------------------------
    async def start(self, probe: bool = True) -> None:
        """Open the HTTP session (not needed, and not opened, in offline mode) and, with
        ``probe``, check the source answers at all: an unreachable one (no network) or a
        refusal (wrong URL, unknown book) stops the run here, in seconds."""
        if not self.offline:
            await self.api.start()
            if probe:
                await self.api.probe()

    async def close(self) -> None:
        await self.api.close()

    async def __aenter__(self) -> WikipediaClient:
        await self.start(probe=False)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def identity(self) -> dict[str, Any]:
        """What a run should record about where its pages came from."""
        return {
            **self.source.identity(),
            "api_url": self.api_url,
            "epoch": self.epoch,
            "cache_dir": str(self.cache_dir),
            "offline": self.offline,
            "markdownify": version("markdownify"),
        }

    # -- public API ------------------------------------------------------------------------
    async def search(self, query: str, results: int = 10) -> list[Evidence]:
        """Full-text search; hits come back with ``revid=None`` (see :meth:`revid`)."""
        hits = await self._once("search", (query, results),
                                lambda: self._online(self.source.search(query, results)))
        return list(hits)

    async def revid(self, evidence: Evidence) -> int | None:
        """The page's newest revision at or before the epoch (memoised per pageid; None from
        a Kiwix archive, which keeps no revision ids)."""
        if evidence.revid is not None:
            return evidence.revid
        if evidence.pageid is None:
            return None
        known = self._revids.get(evidence.pageid)
        if known is not None:
            return known
        return await self._once("revid", evidence.pageid, lambda: self._revid(evidence))

    async def resolve(self, evidence: Evidence) -> Evidence:
        """The same Evidence with ``revid`` filled in."""
        return replace(evidence, revid=await self.revid(evidence))

    async def content(self, evidence: Evidence) -> str:
        """The page's Markdown at the epoch: from the cache, else fetched, converted and cached."""
        return (await self.page(evidence)).text

    async def page(self, evidence: Evidence) -> Page:
        """:meth:`content` with where the text came from."""
        cached = self.cache.read(evidence)
        if cached is not None:
            return Page(cached, "cache")
        if self.offline:
            raise DataError(
                f"Wikipedia page {evidence.title!r} (pageid {evidence.pageid}) is not in the "
                f"offline cache {self.cache_dir} (no {self.cache_path(evidence).name}). "
                "Fill it by running once with network access (offline mode off), or unpack "
                "upstream's prebuilt FanOutQA wikicache archive there (or point "
                f"{CACHE_ENV} at where it is)."
            )
        text = await self._once("content", evidence.cache_key,
                                lambda: self._fetch_content(evidence), keep=False)
        return Page(text, self.source.kind)

    async def lookup(self, title: str) -> TitleLookup:
        """Resolve an exact page title at the epoch (redirects followed; memoised per title).

        Through the API, current redirects and disambiguation flags are used (the API has no
        dated view of them); the page must have a revision at or before the epoch to count as
        found. Through Kiwix, the archive's redirects and disambiguation boxes."""
        if not title.strip() or "|" in title:  # "|" would ask for several pages at once
            return TitleLookup(title, None)
        found = await self._once("lookup", title, lambda: self._online(self.source.lookup(title)))
        ev = found.evidence
        if ev is not None and ev.pageid is not None and ev.revid is not None:
            self._revids[ev.pageid] = ev.revid
        return found

    async def disambiguation_options(self, evidence: Evidence) -> list[str]:
        """Titles a disambiguation page offers: the first article link of each list item."""
        options = await self._once("options", evidence.cache_key,
                                   lambda: self._options(evidence))
        return list(options)

    def cache_path(self, evidence: Evidence | int) -> Path:
        return self.cache.path(evidence)

    # -- requests --------------------------------------------------------------------------
    async def _online(self, call: Awaitable[Any]) -> Any:
        if self.offline:
            if asyncio.iscoroutine(call):
                call.close()
            raise DataError(
                "offline mode: cannot ask Wikipedia; only cached page text is available "
                "offline (search and title lookup need the source itself)"
            )
        return await call

    async def _revid(self, evidence: Evidence) -> int | None:
        revid = await self._online(self.source.revid(evidence))
        if revid is not None and evidence.pageid is not None:
            self._revids[evidence.pageid] = revid
        return revid

    async def _html(self, evidence: Evidence) -> str:
        if self.source.kind == "api" and evidence.pageid is None:
            found = await self.lookup(evidence.title)  # a page the dataset left unpinned
            if found.evidence is None:
                raise WikipediaAPIError("missing", f"no page titled {evidence.title!r} had a "
                                        f"revision at or before {self.epoch}")
            evidence = found.evidence
        revid = await self.revid(evidence)
        html = await self._online(self.source.html(evidence, revid))
        if self.source.kind == "kiwix":
            html = await asyncio.to_thread(self.source.article, html)
        return html

    async def _fetch_content(self, evidence: Evidence) -> str:
        html = await self._html(evidence)
        return await asyncio.to_thread(self.cache.store, evidence, html)

    async def _options(self, evidence: Evidence) -> tuple[str, ...]:
        from mindprobe.resources.wiki_markdown import list_item_links  # bs4: loaded on use

        html = await self._html(evidence)
        if not self.cache_path(evidence).exists():  # the page text comes for free
            await asyncio.to_thread(self.cache.store, evidence, html)
        if self.source.kind == "kiwix":
            return tuple(self.source.options(html))
        return tuple(list_item_links(html))

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
                failed = finished.cancelled() or finished.exception() is not None
                if failed or not keep:
                    self._tasks.pop(slot, None)

            task.add_done_callback(settle)
        # shield: one caller's cancellation (e.g. its item timed out) must not fail the others.
        return asyncio.shield(task)
