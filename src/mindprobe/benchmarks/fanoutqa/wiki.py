"""The Wikipedia resource a FanOutQA run reads its pages from, as ``--wiki`` names it."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from mindprobe.errors import UsageError

from .options import FanOutQAOptions

KIWIX_URL_ENV = "MINDPROBE_KIWIX_URL"
#: Where the User-Agent's contact comes from (resources.wiki_http.CONTACT_ENV; not imported
#: here, that module loads aiohttp).
CONTACT_ENV = "MINDPROBE_WIKI_CONTACT"


def wiki_client(opts: FanOutQAOptions, warn: Callable[[str], None] | None = None) -> Any:
    """The Wikipedia resource ``--wiki`` names: the MediaWiki API (``api``) or a kiwix-serve
    (``kiwix:URL``, or ``kiwix`` with $MINDPROBE_KIWIX_URL)."""
    from mindprobe.resources.wikipedia import DEFAULT_API_URL, WikipediaClient

    source, _, url = opts.wiki.partition(":")
    if source == "kiwix":
        url = url or os.environ.get(KIWIX_URL_ENV, "")
        if not url.startswith(("http://", "https://")):
            raise UsageError(f"--wiki {opts.wiki}: give the kiwix-serve's URL, e.g. --wiki "
                             f"kiwix:http://127.0.0.1:8080 (or set ${KIWIX_URL_ENV})")
        if opts.wiki_api:
            raise UsageError("--wiki-api names a MediaWiki API; it does not go with "
                             "--wiki kiwix:URL")
        return WikipediaClient(kiwix_url=url, kiwix_book=opts.kiwix_book,
                               cache_dir=opts.wiki_cache, offline=opts.offline,
                               max_attempts=opts.wiki_attempts)
    if opts.wiki != "api":
        raise UsageError(f"--wiki {opts.wiki!r}: expected api or kiwix:URL")
    if opts.kiwix_book:
        raise UsageError("--kiwix-book goes with --wiki kiwix:URL")
    api_url = opts.wiki_api or DEFAULT_API_URL
    if (warn is not None and api_url == DEFAULT_API_URL and not opts.offline
            and not os.environ.get(CONTACT_ENV)):
        warn(f"Wikimedia's User-Agent policy asks API clients for a contact: set {CONTACT_ENV} "
             "to your email or project URL (or use --wiki kiwix:URL, a local copy)")
    return WikipediaClient(api_url=api_url, cache_dir=opts.wiki_cache, offline=opts.offline,
                           max_attempts=opts.wiki_attempts)


def refuse_wiki_options(opts: FanOutQAOptions, setting: str) -> None:
    """Closed book reads no Wikipedia: a Wikipedia flag there is a mistake, not ignored."""
    given = [flag for flag, value, default in (
        ("--wiki", opts.wiki, "api"), ("--kiwix-book", opts.kiwix_book, None),
        ("--wiki-api", opts.wiki_api, None), ("--wiki-cache", opts.wiki_cache, None),
        ("--offline", opts.offline, False), ("--wiki-attempts", opts.wiki_attempts, 5),
    ) if value != default]
    if given:
        raise UsageError(f"{given[0]} sets how Wikipedia is read, which fanoutqa:{setting} "
                         "never does; use it with fanoutqa:evidenceprovided or "
                         "fanoutqa:openbook, or leave it out")
