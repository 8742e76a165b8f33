"""The Kiwix source against a real kiwix-serve over a ZIM built from the fixture pages."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest

from mindprobe.resources.wiki_markdown import html_to_markdown
from mindprobe.resources.wikipedia import (
    Evidence,
    WikipediaClient,
    WikipediaError,
    WikipediaRefused,
    WikipediaUnreachable,
)
from mindprobe.testing.kiwix import KiwixServer, build_zim, kiwix_missing
from mindprobe.testing.wiki_fixtures import FANOUTQA_DEV_PAGES, PYTHON_DATED_HTML

pytestmark = pytest.mark.skipif(kiwix_missing() is not None, reason=str(kiwix_missing()))


@pytest.fixture(scope="module")
def kiwix(tmp_path_factory):
    zim = build_zim(tmp_path_factory.mktemp("zim") / "wiki_test.zim")
    with KiwixServer(zim) as server:
        yield server


@pytest.fixture
def client(kiwix, tmp_path, monkeypatch):
    monkeypatch.delenv("MINDPROBE_FANOUTQA_CACHE", raising=False)

    def make(**kw) -> WikipediaClient:
        kw.setdefault("kiwix_url", kiwix.url)
        kw.setdefault("kiwix_book", kiwix.book)
        kw.setdefault("cache_dir", tmp_path / "wikicache")
        kw.setdefault("backoff_base", 0.01)
        kw.setdefault("backoff_max", 0.05)
        return WikipediaClient(**kw)

    return make


def run(client: WikipediaClient, work):
    async def main():
        async with client:
            return await work(client)

    return asyncio.run(main())


def test_search_reads_the_rss_feed(client):
    hits = run(client(), lambda c: c.search("baseball draft", 3))
    assert 1 <= len(hits) <= 3
    titles = [h.title for h in hits]
    assert all(h.pageid is None and h.revid is None and h.path for h in hits)
    assert set(titles) <= {p.title for p in FANOUTQA_DEV_PAGES}
    assert hits[0].url.startswith("https://en.wikipedia.org/wiki/")
    assert run(client(), lambda c: c.search("qqqzzzxxy nothing like it")) == []


def test_newer_servers_atom_feed_is_read_too():
    """Upstream parses Atom (newer kiwix-serve): entry/title and entry/link@href."""
    from mindprobe.resources.wiki_kiwix import KiwixHTTP, KiwixSource

    atom = (b'<feed xmlns="http://www.w3.org/2005/Atom"><entry><title>Pat Burrell</title>'
            b'<link href="/content/wiki_test/A/Pat_Burrell"/></entry><entry><title>Elsewhere'
            b'</title><link href="/other_book/Elsewhere"/></entry></feed>')
    hits = KiwixSource(KiwixHTTP("http://127.0.0.1:1", "wiki_test"))._hits(atom)
    assert [(h.title, h.path) for h in hits] == [("Pat Burrell", "A/Pat_Burrell")]


def test_lookup_normalises_titles_follows_redirects_and_flags_disambiguation(client):
    async def work(c: WikipediaClient):
        return await asyncio.gather(c.lookup("pat Burrell"), c.lookup("Zurich"),
                                    c.lookup("No such page at all"), c.lookup("Python"))

    burrell, zurich, missing, python = run(client(), work)
    assert burrell.evidence.title == "Pat Burrell" and not burrell.disambiguation
    assert zurich.evidence.title == "Zürich" and zurich.evidence.path == "Zürich"
    assert missing.evidence is None
    assert python.disambiguation
    options = run(client(), lambda c: c.disambiguation_options(python.evidence))
    assert options == ["Pythonidae", "Python (programming language)", "Monty Python"]


def test_page_text_is_the_api_markdown_and_says_where_it_came_from(client):
    c = client()
    ev = Evidence.from_title(23862, "Python (programming language)", 1185000000)
    first = run(c, lambda c: c.page(ev))
    assert first.source == "kiwix"
    # The article body converts exactly as the API's parse output of the dated revision.
    assert first.text == html_to_markdown(PYTHON_DATED_HTML.replace('href="/wiki/', 'href="./'))
    assert first.text == html_to_markdown(PYTHON_DATED_HTML)
    assert "Python (programming language)" not in first.text.splitlines()[0]  # no title h1
    assert (c.cache_dir / "23862-dated.md").read_text(encoding="utf-8") == first.text
    again = run(client(), lambda c: c.page(ev))
    assert again.source == "cache" and again.text == first.text


def test_a_page_without_ids_is_read_by_title_and_cached_by_title(client):
    c = client()
    ev = Evidence(None, None, "Zürich", "https://en.wikipedia.org/wiki/Z%C3%BCrich")
    page = run(c, lambda c: c.page(ev))
    assert "largest city in Switzerland" in page.text and page.source == "kiwix"
    assert c.cache_path(ev).name.startswith("title-") and c.cache_path(ev).is_file()


def test_default_cache_is_the_books_own_folder(client, kiwix, tmp_path, monkeypatch):
    monkeypatch.setenv("MINDPROBE_FANOUTQA_CACHE", str(tmp_path / "root"))
    c = client(cache_dir=None)
    assert c.cache_dir == tmp_path / "root" / "kiwix" / kiwix.book
    assert c.identity()["kiwix_book"] == kiwix.book and c.identity()["source"] == "kiwix"


def test_a_missing_evidence_page_fails_its_item(client):
    with pytest.raises(WikipediaError, match="no page titled 'Nowhere Land'"):
        run(client(), lambda c: c.content(Evidence(1, 2, "Nowhere Land", "u")))


def test_an_unknown_book_stops_the_run_naming_the_flag(client):
    with pytest.raises(WikipediaRefused, match="no book 'wikipedia_nope'.*--kiwix-book"):
        run(client(kiwix_book="wikipedia_nope"), lambda c: c.search("python"))


def test_an_unreachable_kiwix_stops_the_run_in_seconds(client):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    c = client(kiwix_url=f"http://127.0.0.1:{port}", backoff_base=0.05, backoff_max=0.1)
    c.api.retry.refused_window = 0.1

    async def work(c: WikipediaClient):
        return await asyncio.gather(*(c.content(Evidence(i, i, f"Page {i}", "u"))
                                      for i in range(8)))

    t0 = time.monotonic()
    with pytest.raises(WikipediaUnreachable) as err:
        run(c, work)
    assert time.monotonic() - t0 < 5
    message = str(err.value)
    assert f"Kiwix server at http://127.0.0.1:{port}" in message and "--wiki-cache" in message


def test_start_probes_the_source_unknown_book_and_nothing_listening(client):
    """What a run's start does: a wrong book or a dead server stops it before any model."""
    with pytest.raises(WikipediaRefused, match="no book 'wikipedia_nope'"):
        asyncio.run(_start(client(kiwix_book="wikipedia_nope")))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    c = client(kiwix_url=f"http://127.0.0.1:{port}")
    c.api.retry.refused_window = 0.3
    with pytest.raises(WikipediaUnreachable, match="does not answer.*kiwix-serve --port"):
        asyncio.run(_start(c))
    asyncio.run(_start(client()))  # the real server and book: no error


async def _start(c: WikipediaClient) -> None:
    try:
        await c.start()
    finally:
        await c.close()
