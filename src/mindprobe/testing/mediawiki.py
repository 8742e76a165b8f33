"""A fake MediaWiki API on 127.0.0.1, for testing the Wikipedia client without the internet.

It answers the calls FanOutQA makes, shaped like en.wikipedia.org's ``api.php`` (``format=json``,
formatversion 1): ``action=query&list=search``, ``action=query&prop=revisions|pageprops`` by
``pageids`` or ``titles`` (with ``rvstart``/``rvdir``, ``redirects``, title normalisation) and
``action=parse&oldid=…&prop=text``. Pages come from :mod:`mindprobe.testing.wiki_fixtures`
unless given. Every API request is logged (params, User-Agent, injected fault), so tests can
assert what was asked and how often. Faults: seeded rates and ``fail_first_n`` as in the
OpenAI-compatible test server, plus :meth:`MediaWikiServer.inject` to queue exact faults for the
next requests ("500", "429" with Retry-After, "timeout", "drop", "malformed", "ratelimited").

In-process: ``with MediaWikiServer(latency=0.05) as wiki: WikipediaClient(api_url=wiki.api_url)``.
CLI: ``python -m mindprobe.testing.mediawiki --port 0`` prints ``READY <api_url>``; control
endpoints ``GET /stats``, ``POST /reset-stats`` and ``POST /inject?faults=500,429`` sit beside it.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import signal
import sys
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from aiohttp import web

from mindprobe.testing.faults import RATE_KINDS, FaultPlan
from mindprobe.testing.server import TestServer, serve
from mindprobe.testing.wiki_fixtures import PAGES, REDIRECTS, Revision, WikiPage

API_PATH = "/w/api.php"
#: Faults inject() can queue: the rate-drawn kinds plus MediaWiki's own "ratelimited" API error.
QUEUE_KINDS = (*RATE_KINDS, "ratelimited")


@dataclass
class MediaWikiConfig:
    """The keyword arguments of MediaWikiServer (besides ``port``)."""

    pages: Sequence[WikiPage] = PAGES
    redirects: Mapping[str, str] = field(default_factory=lambda: dict(REDIRECTS))
    latency: float = 0.0  # seconds before every API answer (makes concurrent calls overlap)
    #: Share of requests per fault kind ("500", "429", "timeout", "drop", "malformed"), seeded.
    fault_rates: Mapping[str, float] = field(default_factory=dict)
    fail_first_n: int = 0
    retry_after: int = 1
    hang_seconds: float = 30.0
    seed: int = 0


def api_error(code: str, info: str) -> dict[str, Any]:
    return {"error": {"code": code, "info": info, "*": "See the fake server's docstring."}}


def normalise_title(title: str) -> str:
    """MediaWiki's title normalisation for the main namespace: underscores, spaces, first letter."""
    title = re.sub(r"[ _]+", " ", title).strip()
    return title[:1].upper() + title[1:]


def _when(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp)


class WikiStats:
    """The request log behind GET /stats; only touched from the server's event loop."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> dict[str, Any]:
        self.log: list[dict[str, Any]] = []
        self.faults: dict[str, int] = {}
        return self.snapshot()

    def record(self, params: dict[str, str], user_agent: str | None, fault: str | None) -> None:
        self.log.append({"params": params, "user_agent": user_agent, "fault": fault})
        if fault is not None:
            self.faults[fault] = self.faults.get(fault, 0) + 1

    def snapshot(self) -> dict[str, Any]:
        return {
            "requests": [dict(entry) for entry in self.log],
            "requests_total": len(self.log),
            "faults": dict(self.faults),
            "faults_total": sum(self.faults.values()),
        }


class WikiService:
    """The API's handlers and the state they share; lives on one event loop."""

    def __init__(self, config: MediaWikiConfig) -> None:
        if config.latency < 0 or config.hang_seconds < 0:
            raise ValueError("latency and hang_seconds must be >= 0")
        self.config = config
        self.by_id = {p.pageid: p for p in config.pages}
        self.by_title = {p.title: p for p in config.pages}
        self.by_revid = {r.revid: (p, r) for p in config.pages for r in p.revisions}
        self.plan = FaultPlan(dict(config.fault_rates), config.fail_first_n, config.seed)
        self.queue: deque[str] = deque()
        self.stats = WikiStats()

    def reset(self) -> dict[str, Any]:
        """Empty the request log and the queue of injected faults."""
        self.queue.clear()
        return self.stats.reset()

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", API_PATH, self.api)
        app.router.add_get("/stats", self.get_stats)
        app.router.add_post("/reset-stats", self.reset_stats)
        app.router.add_post("/inject", self.post_inject)
        return app

    def inject(self, faults: Iterable[str]) -> dict[str, Any]:
        """Queue faults for the next requests, one each, before any rate-drawn fault."""
        faults = list(faults)
        unknown = sorted(set(faults) - set(QUEUE_KINDS))
        if unknown:
            raise ValueError(f"unknown fault kinds {unknown}; known: {list(QUEUE_KINDS)}")
        self.queue.extend(faults)
        return {"queued": list(self.queue)}

    async def get_stats(self, request: web.Request) -> web.Response:
        return web.json_response(self.stats.snapshot())

    async def reset_stats(self, request: web.Request) -> web.Response:
        return web.json_response(self.stats.reset())

    async def post_inject(self, request: web.Request) -> web.Response:
        kinds = [k for k in request.query.get("faults", "").split(",") if k]
        try:
            return web.json_response(self.inject(kinds))
        except ValueError as exc:
            return web.json_response({"error": str(exc)}, status=400)

    # -- the API ---------------------------------------------------------------------------
    async def api(self, request: web.Request) -> web.StreamResponse:
        params = dict(request.query)
        if request.method == "POST":
            params.update({k: str(v) for k, v in (await request.post()).items()})
        fault = self.queue.popleft() if self.queue else self.plan.decide()
        if fault == "fail_first_n":
            fault = "500"
        self.stats.record(params, request.headers.get("User-Agent"), fault)
        if self.config.latency:
            await asyncio.sleep(self.config.latency)
        if fault == "timeout":  # hang, then answer long after a sane client has given up
            await asyncio.sleep(self.config.hang_seconds)
        elif fault is not None:
            return await self._fault(fault, request)
        return web.json_response(self._answer(params))

    def _answer(self, params: dict[str, str]) -> dict[str, Any]:
        action = params.get("action")
        if params.get("format") != "json":
            return api_error("badformat", "this fake server only answers format=json")
        try:
            if action == "parse":
                return self._parse(params)
            if action == "query":
                return self._query(params)
        except ValueError as exc:  # a bad number or timestamp in the parameters
            return api_error("badvalue", str(exc))
        return api_error("badvalue", f'Unrecognized value for parameter "action": {action}.')

    async def _fault(self, fault: str, request: web.Request) -> web.StreamResponse:
        if fault == "429":
            headers = {"Retry-After": str(self.config.retry_after)}
            return web.Response(status=429, text="Too many requests (injected)", headers=headers)
        if fault == "ratelimited":
            return web.json_response(api_error("ratelimited", "You've exceeded your rate limit."))
        if fault == "malformed":
            return web.Response(text='{"query": {"pages": {"1', content_type="application/json")
        if fault == "drop":
            if request.transport is not None:
                request.transport.abort()
            await asyncio.Event().wait()  # cancelled by aiohttp once the connection is gone
        return web.Response(status=500, text="Internal server error (injected)")

    def _parse(self, params: dict[str, str]) -> dict[str, Any]:
        oldid = params.get("oldid", "")
        found = self.by_revid.get(int(oldid)) if oldid.isdigit() else None
        if found is None:
            return api_error("nosuchrevid", f"There is no revision with ID {oldid}.")
        page, rev = found
        parse: dict[str, Any] = {"title": page.title, "pageid": page.pageid, "revid": rev.revid}
        if "text" in params.get("prop", "text").split("|") and rev.html is not None:
            parse["text"] = {"*": rev.html}
        return {"parse": parse}

    def _query(self, params: dict[str, str]) -> dict[str, Any]:
        if params.get("list") == "search":
            return self._search(params)
        query: dict[str, Any] = {}
        pages: dict[str, dict[str, Any]] = {}
        if "pageids" in params:
            for raw in params["pageids"].split("|"):
                page = self.by_id.get(int(raw)) if raw.isdigit() else None
                missing = {"pageid": int(raw) if raw.isdigit() else raw, "missing": ""}
                pages[raw] = self._page(page, params) if page else missing
        for n, title in enumerate(t for t in params.get("titles", "").split("|") if t):
            page = self.by_title.get(self._resolve(title, params, query))
            key = str(page.pageid) if page else str(-1 - n)
            pages[key] = (
                self._page(page, params) if page else {"ns": 0, "title": title, "missing": ""}
            )
        query["pages"] = pages
        return {"batchcomplete": "", "query": query}

    def _resolve(self, title: str, params: dict[str, str], query: dict[str, Any]) -> str:
        """Normalise the title and follow a redirect (when asked), noting both as MediaWiki does."""
        norm = normalise_title(title)
        if norm != title:
            query.setdefault("normalized", []).append({"from": title, "to": norm})
        target = self.config.redirects.get(norm)
        if target is not None and "redirects" in params:
            query.setdefault("redirects", []).append({"from": norm, "to": target})
            return target
        return norm

    def _page(self, page: WikiPage, params: dict[str, str]) -> dict[str, Any]:
        entry: dict[str, Any] = {"pageid": page.pageid, "ns": 0, "title": page.title}
        props = params.get("prop", "").split("|")
        if "pageprops" in props and page.disambiguation:
            wanted = params.get("ppprop")
            if wanted is None or "disambiguation" in wanted.split("|"):
                entry["pageprops"] = {"disambiguation": ""}
        if "revisions" in props:
            revs = self._revisions(page, params)
            if revs:
                entry["revisions"] = [
                    {"revid": r.revid, "parentid": 0, "timestamp": r.timestamp} for r in revs
                ]
        return entry

    def _revisions(self, page: WikiPage, params: dict[str, str]) -> list[Revision]:
        """rvdir=older (default): newest first, at or before rvstart; rvdir=newer: the reverse."""
        newer = params.get("rvdir") == "newer"
        revs = sorted(page.revisions, key=lambda r: _when(r.timestamp), reverse=not newer)
        if "rvstart" in params:
            start = _when(params["rvstart"])

            def in_range(rev: Revision) -> bool:
                return _when(rev.timestamp) >= start if newer else _when(rev.timestamp) <= start

            revs = [r for r in revs if in_range(r)]
        limit = params.get("rvlimit", "1")
        return revs[: int(limit)] if limit.isdigit() else revs

    def _search(self, params: dict[str, str]) -> dict[str, Any]:
        words = re.findall(r"\w+", params.get("srsearch", "").lower())
        if not words:
            return api_error("nosrsearch", 'The "srsearch" parameter must be set.')
        scored = []
        for page in self.config.pages:
            text = re.sub(r"<[^>]+>", " ", page.revisions[-1].html or "").lower()
            title = page.title.lower()
            score = sum(10 * title.count(w) + text.count(w) for w in words)
            if score:
                scored.append((-score, page.pageid, page))
        scored.sort(key=lambda s: s[:2])
        limit = int(params.get("srlimit", "10"))
        hits = [
            {
                "ns": 0,
                "title": p.title,
                "pageid": p.pageid,
                "snippet": "",
                "timestamp": p.revisions[-1].timestamp,
            }
            for _, _, p in scored[:limit]
        ]
        body: dict[str, Any] = {
            "batchcomplete": "",
            "query": {"searchinfo": {"totalhits": len(scored)}, "search": hits},
        }
        if len(scored) > limit:
            body["continue"] = {"sroffset": limit, "continue": "-||"}
        return body


class MediaWikiServer(TestServer):
    """The fake API in a background thread, for synchronous tests.

    Takes the fields of :class:`MediaWikiConfig` plus ``port``; thread, startup and shutdown
    are :class:`~mindprobe.testing.server.TestServer`'s.
    """

    __test__ = False

    def __init__(self, *, port: int = 0, **config: Any) -> None:
        super().__init__(port=port)
        self.wiki = WikiService(MediaWikiConfig(**config))
        self._service = self.wiki  # what TestServer serves and reads stats from

    @property
    def api_url(self) -> str:
        """``http://127.0.0.1:PORT/w/api.php``; only valid while started."""
        return api_url_of(self.base_url)

    def requests(self, **match: str) -> list[dict[str, Any]]:
        """Logged API requests, oldest first; keyword arguments keep those whose params match."""
        log = self.stats()["requests"]
        return [r for r in log if all(r["params"].get(k) == v for k, v in match.items())]

    def inject(self, *faults: str) -> None:
        """The next len(faults) requests get these faults, in order."""
        self._call(lambda: self.wiki.inject(faults))

    def reset(self) -> dict[str, Any]:
        """Empty the request log and drop faults still queued by inject()."""
        return self._call(self.wiki.reset)


def api_url_of(base_url: str) -> str:
    """TestServer announces ``http://127.0.0.1:PORT/v1``; the API lives at API_PATH instead."""
    return base_url.removesuffix("/v1") + API_PATH


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m mindprobe.testing.mediawiki",
        description="Fake MediaWiki API (fixture pages) on 127.0.0.1.",
    )
    p.add_argument("--port", type=int, default=0, help="0 = pick a free port (default)")
    p.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    p.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="KIND=RATE",
        help=f"share of requests that get a fault; KIND is one of {', '.join(RATE_KINDS)}",
    )
    p.add_argument("--fail-first-n", type=int, default=0, help="first N requests get a 500")
    p.add_argument("--retry-after", type=int, default=1, help="Retry-After seconds on 429")
    p.add_argument("--hang-seconds", type=float, default=30.0, help="how long a timeout hangs")
    p.add_argument("--seed", type=int, default=0, help="seed for fault draws")
    return p


def _rates(specs: Sequence[str]) -> dict[str, float]:
    """``["500=0.1", "drop=0.05"]`` -> ``{"500": 0.1, "drop": 0.05}``; FaultPlan checks the rest."""
    rates = {}
    for spec in specs:
        kind, _, rate = spec.partition("=")
        try:
            rates[kind] = float(rate)
        except ValueError:
            raise ValueError(f"--fault wants KIND=RATE (e.g. 500=0.1), got {spec!r}") from None
    return rates


async def _serve_until_signalled(service: WikiService, port: int) -> None:
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    await serve(service, port, stop, lambda url: print(f"READY {api_url_of(url)}", flush=True))


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point: serve until SIGTERM/SIGINT; bad flags exit with status 2."""
    parser = _parser()
    args = parser.parse_args(argv)
    settings = {k: v for k, v in vars(args).items() if k not in ("port", "fault")}
    try:
        service = WikiService(MediaWikiConfig(fault_rates=_rates(args.fault), **settings))
    except ValueError as exc:
        parser.error(str(exc))
    asyncio.run(_serve_until_signalled(service, args.port))
    return 0


if __name__ == "__main__":
    sys.exit(main())
