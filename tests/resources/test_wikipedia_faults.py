"""Retries, backoff and clear failures: injected faults, a closed port, a hung server."""

from __future__ import annotations

import socket
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from mindprobe.errors import MindprobeError
from mindprobe.models.base import TransientError
from mindprobe.models.wire import parse_retry_after as retry_after_seconds
from mindprobe.resources.wiki_api import MediaWikiAPI
from mindprobe.resources.wikipedia import (
    Evidence,
    WikipediaClient,
    WikipediaError,
    WikipediaRefused,
)
from mindprobe.testing.mediawiki import MediaWikiServer


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_retries_through_every_injected_fault_kind(wiki, make_client, run):
    wiki.inject("500", "drop", "malformed", "ratelimited")
    hits = run(make_client(wiki.api_url), lambda c: c.search("python"))
    assert [h.title for h in hits][:1] == ["Python"]
    log = wiki.requests()
    assert [r["fault"] for r in log] == ["500", "drop", "malformed", "ratelimited", None]
    assert all(r["params"] == log[0]["params"] for r in log)


def test_429_retry_after_is_honoured(wiki, make_client, run):
    wiki.inject("429")
    t0 = time.monotonic()
    revid = run(make_client(wiki.api_url), lambda c: c.revid(Evidence.from_title(18942, "M")))
    elapsed = time.monotonic() - t0
    assert revid == 1184000001
    assert [r["fault"] for r in wiki.requests()] == ["429", None]
    assert elapsed >= 1.0  # the server said Retry-After: 1; backoff alone would be ~0.01 s


def test_gives_up_after_bounded_attempts_with_the_last_cause(wiki, make_client, run):
    wiki.inject("500", "500", "500")
    with pytest.raises(WikipediaError) as err:
        run(make_client(wiki.api_url, max_attempts=3), lambda c: c.search("python"))
    assert isinstance(err.value, TransientError)  # the runner records the item and goes on
    assert "after 3 attempts: HTTP 500" in str(err.value) and wiki.api_url in str(err.value)
    assert len(wiki.requests()) == 3


def test_unreachable_server_fails_fast_and_clearly(make_client, run):
    url = f"http://127.0.0.1:{closed_port()}/w/api.php"
    t0 = time.monotonic()
    with pytest.raises(WikipediaError) as err:
        run(make_client(url, max_attempts=3), lambda c: c.search("python"))
    assert time.monotonic() - t0 < 5
    msg = str(err.value)
    assert url in msg and "after 3 attempts" in msg and "Connect" in msg


def test_hung_server_times_out_then_gives_up(make_client, run):
    with MediaWikiServer(fault_rates={"timeout": 1.0}, hang_seconds=5.0) as srv:
        t0 = time.monotonic()
        with pytest.raises(WikipediaError, match="after 2 attempts: TimeoutError"):
            run(make_client(srv.api_url, timeout=0.3, max_attempts=2), lambda c: c.search("x"))
        assert time.monotonic() - t0 < 3


def test_refusal_stops_the_run_without_retries(wiki, make_client, run):
    wrong = wiki.api_url.replace("/w/api.php", "/api.php")  # a 404 from the server
    with pytest.raises(WikipediaRefused, match="HTTP 404") as err:
        run(make_client(wrong), lambda c: c.search("python"))
    assert isinstance(err.value, MindprobeError) and not isinstance(err.value, TransientError)


def test_concurrency_is_bounded(wiki, make_client, run):
    import asyncio

    async def work(c: WikipediaClient):
        return await asyncio.gather(*(c.search(f"python {i}") for i in range(6)))

    client = make_client(wiki.api_url, max_concurrency=2)
    t0 = time.monotonic()
    run(client, work)
    # 6 requests of 0.05 s server latency, 2 at a time: at least 3 rounds.
    assert time.monotonic() - t0 >= 0.15
    assert len(wiki.requests()) == 6
    with pytest.raises(ValueError, match="max_concurrency"):
        WikipediaClient(max_concurrency=0)


def test_retry_after_parsing():
    assert retry_after_seconds(None) is None and retry_after_seconds("") is None
    assert retry_after_seconds("3") == 3.0 and retry_after_seconds("-2") == 0.0
    assert retry_after_seconds("soon") is None
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 < retry_after_seconds(later) <= 30
    past = format_datetime(datetime.now(UTC) - timedelta(seconds=30), usegmt=True)
    assert retry_after_seconds(past) == 0.0


def test_backoff_is_jittered_exponential_with_retry_after_as_floor():
    api = MediaWikiAPI(backoff_base=1.0, backoff_max=8.0)
    for attempt, (low, high) in enumerate([(0.5, 1), (1, 2), (2, 4), (4, 8), (4, 8)]):
        waits = {api.retry.delay(attempt, None) for _ in range(20)}
        assert all(low <= w <= high for w in waits) and len(waits) > 1
    assert api.retry.delay(0, 5.0) == 5.0
    assert api.retry.delay(0, 10_000.0) == 120.0  # a silly Retry-After is capped


def test_rate_limits_are_waited_out_without_using_attempts_or_counting_as_dead(make_client, run):
    """429 with Retry-After and MediaWiki's ratelimited error: the server is there, only busy;
    more of them than attempts allowed still end in the answer, and never in a dead source."""
    with MediaWikiServer(retry_after=0) as srv:
        srv.inject("429", "ratelimited", "429", "ratelimited", "429")
        client = make_client(srv.api_url, max_attempts=2)
        retry = client.api.retry
        retry.dead_streak, retry.refused_window, retry.broken_window = 1, 0, 0
        hits = run(client, lambda c: c.search("python"))
        assert [h.title for h in hits][:1] == ["Python"]
        assert [r["fault"] for r in srv.requests()] == [
            "429", "ratelimited", "429", "ratelimited", "429", None]


def test_a_dead_api_stops_the_run_naming_the_host_and_the_fixes(make_client, run):
    import asyncio

    from mindprobe.resources.wikipedia import WikipediaUnreachable

    url = f"http://127.0.0.1:{closed_port()}/w/api.php"
    client = make_client(url)
    client.api.retry.refused_window = 0.0  # dead by the failure streak alone (no race)

    async def work(c):
        return await asyncio.gather(*(c.search(f"q{i}") for i in range(8)))

    with pytest.raises(WikipediaUnreachable) as err:
        run(client, work)
    message = str(err.value)
    assert isinstance(err.value, MindprobeError) and not isinstance(err.value, TransientError)
    assert f"the Wikipedia API at {url}" in message and "stopped answering" in message
    assert "--wiki kiwix:" in message and "--wiki-cache DIR --offline" in message
