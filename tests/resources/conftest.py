"""Fixtures for the Wikipedia resource: a fake MediaWiki server and clients pointed at it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from mindprobe.resources.wikipedia import WikipediaClient
from mindprobe.testing.mediawiki import MediaWikiServer


@pytest.fixture(scope="module")
def wiki_server():
    """One fake MediaWiki per test module; a little latency so concurrent calls overlap."""
    with MediaWikiServer(latency=0.05, hang_seconds=2.0) as srv:
        yield srv


@pytest.fixture
def wiki(wiki_server):
    """The module's server with an empty request log and no queued faults."""
    wiki_server.reset()
    return wiki_server


@pytest.fixture
def make_client(tmp_path, monkeypatch) -> Callable[..., WikipediaClient]:
    """make_client(api_url, **kw): a client with a per-test cache and near-instant backoff."""
    monkeypatch.delenv("MINDPROBE_FANOUTQA_CACHE", raising=False)
    monkeypatch.delenv("MINDPROBE_WIKI_CONTACT", raising=False)

    def make(api_url: str = "http://127.0.0.1:9/w/api.php", **kw: Any) -> WikipediaClient:
        kw.setdefault("cache_dir", tmp_path / "wikicache")
        kw.setdefault("backoff_base", 0.01)
        kw.setdefault("backoff_max", 0.05)
        return WikipediaClient(api_url=api_url, **kw)

    return make


def _run(client: WikipediaClient, work: Callable[[WikipediaClient], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with client:
            return await work(client)

    return asyncio.run(main())


@pytest.fixture
def run():
    """run(client, work): start the client, await work(client) on a fresh loop, close it."""
    return _run
