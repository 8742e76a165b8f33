"""WikipediaClient against the fake MediaWiki: search, revisions, page text, cache, sharing."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from mindprobe import __version__
from mindprobe.errors import DataError
from mindprobe.resources.wikipedia import (
    EPOCH,
    Evidence,
    WikipediaAPIError,
    WikipediaClient,
    WikipediaError,
    wiki_cache_dir,
)
from mindprobe.testing.wiki_fixtures import PYTHON_DATED_HTML

PY = Evidence.from_title(23862, "Python (programming language)")
PY_DATED_MD = (
    "For the snake, see Pythonidae.\n\n\n**Python** is a high-level\nprogramming language "
    "created by Guido van Rossum.\n\n\n![Python logo](image)![](image)\n\n\n## History\n\n\n"
    "Development started in the late 1980s; version 3.12 was released in October 2023.\n\n\n"
    "### Releases\n\n\n* Python 2.0 (2000)\n* Python 3.0 (2008)\n"
)


def test_search_returns_evidence_and_resolves_revid_lazily(wiki, make_client, run):
    client = make_client(wiki.api_url)

    async def work(c: WikipediaClient):
        hits = await c.search("programming language python", results=2)
        after_search = len(wiki.requests())
        again = await c.search("programming language python", results=2)
        revid = await c.revid(hits[0])
        resolved = await c.resolve(hits[0])
        return hits, after_search, again, revid, resolved

    hits, after_search, again, revid, resolved = run(client, work)
    assert hits[0] == Evidence(
        pageid=23862,
        revid=None,
        title="Python (programming language)",
        url="https://en.wikipedia.org/wiki/Python%20%28programming%20language%29",
    )
    assert len(hits) == 2 and again == hits
    assert after_search == 1  # no revision lookups until asked
    assert revid == 1185000000  # newest at or before the epoch, not the December revision
    assert resolved == Evidence(23862, 1185000000, hits[0].title, hits[0].url)
    search, revisions = wiki.requests()  # the repeated search and revid were memoised
    assert search["params"] == {
        "action": "query",
        "list": "search",
        "srsearch": "programming language python",
        "srlimit": "2",
        "format": "json",
    }
    assert revisions["params"] == {
        "action": "query",
        "prop": "revisions",
        "rvprop": "ids|timestamp",
        "rvlimit": "1",
        "pageids": "23862",
        "rvstart": "2023-11-20T00:00:00+00:00",
        "format": "json",
    }
    assert EPOCH == "2023-11-20T00:00:00+00:00"


def test_search_memo_is_per_query_and_result_count(wiki, make_client, run):
    async def work(c: WikipediaClient):
        await c.search("python", 1)
        await c.search("python", 3)
        await c.search("python", 1)
        return await c.search("monty", 1)

    assert [e.title for e in run(make_client(wiki.api_url), work)] == ["Monty Python"]
    assert [r["params"]["srlimit"] for r in wiki.requests(list="search")] == ["1", "3", "1"]


def test_content_fetches_dated_revision_writes_cache_then_serves_it(wiki, make_client, run):
    client = make_client(wiki.api_url)
    text = run(client, lambda c: c.content(PY))
    assert text == PY_DATED_MD
    assert [r["params"].get("prop") for r in wiki.requests()] == ["revisions", "text"]
    assert wiki.requests()[1]["params"] == {
        "action": "parse",
        "oldid": "1185000000",
        "prop": "text",
        "format": "json",
    }
    cache = client.cache_dir
    assert sorted(p.name for p in cache.iterdir()) == ["23862-dated.md"]  # no temp files left
    assert (cache / "23862-dated.md").read_bytes() == PY_DATED_MD.encode("utf-8")

    wiki.reset()
    fresh = make_client(wiki.api_url)  # nothing memoised: the disk cache alone answers
    assert run(fresh, lambda c: c.content(PY)) == PY_DATED_MD
    assert wiki.requests() == []


def test_content_uses_a_known_revid_and_keys_the_cache_by_pageid(wiki, make_client, run):
    older = Evidence(23862, 1180000000, PY.title, PY.url)
    client = make_client(wiki.api_url)
    assert run(client, lambda c: c.content(older)) == "An old revision of Python.\n\n"
    assert [r["params"]["oldid"] for r in wiki.requests()] == ["1180000000"]
    assert (client.cache_dir / "23862-dated.md").exists()


def test_content_is_utf8_on_disk(wiki, make_client, run):
    client = make_client(wiki.api_url)
    zurich = Evidence.from_title(37229, "Zürich")
    text = run(client, lambda c: c.content(zurich))
    assert "**Zürich** is the largest city in Switzerland — about 420 000" in text
    assert (client.cache_dir / "37229-dated.md").read_bytes().decode("utf-8") == text


def test_concurrent_duplicate_requests_share_one_fetch(wiki, make_client, run):
    async def work(c: WikipediaClient):
        return await asyncio.gather(
            *(c.content(PY) for _ in range(6)),
            *(c.search("python") for _ in range(4)),
            *(c.lookup("Zurich") for _ in range(3)),
        )

    results = run(make_client(wiki.api_url), work)
    assert results[:6] == [PY_DATED_MD] * 6
    assert all(r == results[6] for r in results[6:10])
    kinds = [(r["params"].get("list") or r["params"].get("prop")) for r in wiki.requests()]
    assert sorted(kinds) == ["pageprops|revisions", "revisions", "search", "text"]


def test_a_cancelled_waiter_does_not_cancel_the_shared_fetch(wiki, make_client, run):
    async def work(c: WikipediaClient):
        first = asyncio.ensure_future(c.content(PY))
        second = asyncio.ensure_future(c.content(PY))
        await asyncio.sleep(0.01)
        first.cancel()
        return await second

    assert run(make_client(wiki.api_url), work) == PY_DATED_MD
    assert len(wiki.requests(action="parse")) == 1


def test_failed_fetch_is_not_memoised(wiki, make_client, run):
    async def work(c: WikipediaClient):
        with pytest.raises(WikipediaError, match="HTTP 500"):
            await c.search("python")
        return await c.search("python")

    wiki.inject("500", "500")  # two attempts, both fail
    hits = run(make_client(wiki.api_url, max_attempts=2), work)
    assert hits and len(wiki.requests(list="search")) == 3


def test_decode_error_in_cache_refetches_and_repairs(wiki, make_client, run):
    client = make_client(wiki.api_url)
    client.cache_dir.mkdir(parents=True)
    broken = client.cache_dir / "23862-dated.md"
    broken.write_bytes(b"\xff\xfe not utf-8 \xc3")
    assert run(client, lambda c: c.content(PY)) == PY_DATED_MD
    assert len(wiki.requests(action="parse")) == 1
    assert broken.read_bytes() == PY_DATED_MD.encode("utf-8")


def test_offline_serves_the_cache_without_a_session(tmp_path, make_client, run):
    root = tmp_path / "archive"
    root.mkdir()
    (root / "23862-dated.md").write_text("cached text ü", encoding="utf-8")
    client = make_client(cache_dir=root, offline=True)
    assert run(client, lambda c: c.content(PY)) == "cached text ü"
    assert client.api._session is None


def test_offline_cache_miss_names_page_cache_and_fix(tmp_path, make_client, run):
    client = make_client(cache_dir=tmp_path / "empty", offline=True)
    with pytest.raises(DataError) as err:
        run(client, lambda c: c.content(Evidence.from_title(18942, "Monty Python")))
    msg = str(err.value)
    assert "'Monty Python'" in msg and "18942" in msg and str(tmp_path / "empty") in msg
    assert "18942-dated.md" in msg and "MINDPROBE_FANOUTQA_CACHE" in msg
    assert "network access" in msg
    with pytest.raises(DataError, match="offline mode"):
        run(make_client(offline=True), lambda c: c.search("python"))


def test_offline_undecodable_cache_file_is_a_data_error(tmp_path, make_client, run):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "23862-dated.md").write_bytes(b"\xff")
    with pytest.raises(DataError, match="not valid UTF-8"):
        run(make_client(cache_dir=tmp_path / "c", offline=True), lambda c: c.content(PY))


def test_lookup_follows_redirects_and_normalises_titles(wiki, make_client, run):
    async def work(c: WikipediaClient):
        found = await c.lookup("python_language")
        text = await c.content(found.evidence)
        return found, text

    found, text = run(make_client(wiki.api_url), work)
    assert found.evidence == Evidence(23862, 1185000000, PY.title, PY.url)
    assert not found.disambiguation and text == PY_DATED_MD
    # The lookup resolved the revision: no separate prop=revisions request before the parse.
    assert [r["params"]["action"] for r in wiki.requests()] == ["query", "parse"]


def test_lookup_missing_and_not_yet_created_pages(wiki, make_client, run):
    async def work(c: WikipediaClient):
        return await c.lookup("No such page"), await c.lookup("Tomorrow's page")

    missing, future = run(make_client(wiki.api_url), work)
    assert missing.evidence is None and future.evidence is None
    wiki.reset()
    for title in ("Python|Zürich", "  "):  # never sent: "|" would look up two pages
        assert run(make_client(wiki.api_url), lambda c, t=title: c.lookup(t)).evidence is None
    assert wiki.requests() == []


def test_disambiguation_lookup_and_options(wiki, make_client, run):
    async def work(c: WikipediaClient):
        found = await c.lookup("Python")
        options = await c.disambiguation_options(found.evidence)
        again = await c.disambiguation_options(found.evidence)
        text = await c.content(found.evidence)
        return found, options, again, text

    found, options, again, text = run(make_client(wiki.api_url), work)
    assert found.disambiguation and found.evidence.pageid == 46332325
    assert options == again == ["Pythonidae", "Python (programming language)", "Monty Python"]
    assert text.startswith("**Python** may refer to:")
    assert len(wiki.requests(action="parse")) == 1  # options, memo and page text share it


def test_api_errors_are_not_retried(wiki, make_client, run):
    bogus = Evidence(1, 42, "Bogus", "https://en.wikipedia.org/wiki/Bogus")
    with pytest.raises(WikipediaAPIError) as err:
        run(make_client(wiki.api_url), lambda c: c.content(bogus))
    assert err.value.code == "nosuchrevid" and len(wiki.requests()) == 1
    late = Evidence.from_title(71000001, "Tomorrow's page")
    with pytest.raises(WikipediaAPIError, match="no revision at or before 2023-11-20"):
        run(make_client(wiki.api_url), lambda c: c.content(late))


def test_missing_text_warns_and_caches_an_empty_page(wiki, make_client, run, caplog):
    from mindprobe.testing.mediawiki import MediaWikiServer
    from mindprobe.testing.wiki_fixtures import Revision, WikiPage

    hidden = WikiPage(5, "Hidden", (Revision(50, "2023-01-01T00:00:00Z", None),))
    with MediaWikiServer(pages=[hidden]) as srv:
        client = make_client(srv.api_url)
        assert run(client, lambda c: c.content(Evidence.from_title(5, "Hidden"))) == ""
    assert "no text for 'Hidden'" in caplog.text
    assert (client.cache_dir / "5-dated.md").read_text() == ""


def test_user_agent_names_mindprobe_version_and_contact(wiki, make_client, run, monkeypatch):
    run(make_client(wiki.api_url), lambda c: c.search("python"))
    agent = wiki.requests()[-1]["user_agent"]
    assert agent.startswith(f"mindprobe/{__version__} (")
    assert "MINDPROBE_WIKI_CONTACT" in agent and "aiohttp/" in agent

    run(make_client(wiki.api_url, contact="ops@example.org"), lambda c: c.search("monty"))
    assert "(FanOutQA Wikipedia client; ops@example.org)" in wiki.requests()[-1]["user_agent"]

    monkeypatch.setenv("MINDPROBE_WIKI_CONTACT", "https://example.org/bot")
    run(make_client(wiki.api_url), lambda c: c.search("zurich"))
    assert "https://example.org/bot" in wiki.requests()[-1]["user_agent"]

    run(make_client(wiki.api_url, user_agent="MyBot/1.0 (me@x.org)"), lambda c: c.search("x y"))
    assert wiki.requests()[-1]["user_agent"] == "MyBot/1.0 (me@x.org)"


def test_cache_root_argument_beats_env_beats_default(tmp_path, monkeypatch):
    monkeypatch.delenv("MINDPROBE_FANOUTQA_CACHE", raising=False)
    assert wiki_cache_dir() == Path.home() / ".cache" / "fanoutqa" / "wikicache"
    monkeypatch.setenv("MINDPROBE_FANOUTQA_CACHE", str(tmp_path / "env"))
    assert wiki_cache_dir() == tmp_path / "env"
    assert WikipediaClient().cache_dir == tmp_path / "env"
    assert WikipediaClient(cache_dir=tmp_path / "arg").cache_dir == tmp_path / "arg"
    assert WikipediaClient().api_url == "https://en.wikipedia.org/w/api.php"
    ident = WikipediaClient(cache_dir=tmp_path / "arg", offline=True).identity()
    assert ident["epoch"] == "2023-11-20T00:00:00+00:00" and ident["offline"] is True
    assert ident["cache_dir"] == str(tmp_path / "arg") and ident["markdownify"].startswith("0.11.")


def test_requests_before_start_fail_clearly(make_client):
    async def work():
        return await make_client().search("python")

    with pytest.raises(RuntimeError, match="not started"):
        asyncio.run(work())


def test_markdown_of_the_fixture_page_matches_the_golden_text():
    from mindprobe.resources.wiki_markdown import html_to_markdown

    assert html_to_markdown(PYTHON_DATED_HTML) == PY_DATED_MD


def test_importing_the_types_stays_light():
    """Benchmarks import Evidence and the errors at module top; the CLI must stay fast."""
    code = (
        "import sys\nimport mindprobe.resources.wikipedia\n"
        "print(sorted(m for m in ('aiohttp', 'bs4', 'markdownify') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr


def test_a_page_the_dataset_left_unpinned_is_resolved_by_title_at_the_epoch(wiki, make_client,
                                                                            run):
    """jul26 evidence with ``###TBD###`` ids: the API path looks the title up at the epoch
    (redirects followed) and caches the page under its title."""
    client = make_client(wiki.api_url)
    ev = Evidence(None, None, "Zurich", "https://en.wikipedia.org/wiki/Zurich")
    page = run(client, lambda c: c.page(ev))
    assert page.source == "api" and "largest city in Switzerland" in page.text
    assert client.cache_path(ev).name.startswith("title-") and client.cache_path(ev).is_file()
    missing = Evidence(None, None, "Tomorrow's page", "u")  # no revision before the epoch
    with pytest.raises(WikipediaError, match="no page titled"):
        run(make_client(wiki.api_url), lambda c: c.content(missing))
