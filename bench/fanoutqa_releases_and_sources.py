"""FanOutQA: what changed between the releases, and how fast pages come from each source.

1. Counts of what the July 2026 release (jul26) changed against the original (nov23): dev
   answers, dev and test question texts, removed questions, evidence pages added or replaced,
   and pages the corrections left unpinned (``###TBD###`` page/revision ids).
2. Page-fetch rates of the Wikipedia client: a real kiwix-serve over a ZIM of ``--pages``
   synthetic articles (about ``--kb`` KB of HTML each, tables and lists included) read cold
   (fetch + HTML->Markdown + cache write), then the same pages from the page cache (what a run
   with upstream's prebuilt API cache, or a second run, reads), and the fake MediaWiki API on
   127.0.0.1 cold for scale (real Wikipedia adds network latency and, since April 2026, rate
   limits). Needs kiwix-serve (Debian kiwix-tools) and libzim.

    python bench/fanoutqa_releases_and_sources.py [--data-dir ../shared/data/fanoutqa]
        [--pages 300] [--kb 40] [--concurrency 4]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from mindprobe.benchmarks.fanoutqa.data import load_dev, load_test
from mindprobe.resources.wikipedia import Evidence, WikipediaClient
from mindprobe.testing.kiwix import KiwixServer, ZimPage, article_document, build_zim
from mindprobe.testing.mediawiki import MediaWikiServer
from mindprobe.testing.wiki_fixtures import Revision, WikiPage


def release_changes(data_dir: Path | None) -> None:
    old_dev, new_dev = load_dev("nov23", data_dir), load_dev("jul26", data_dir)
    old_test, new_test = load_test("nov23", data_dir), load_test("jul26", data_dir)
    by_old = {q.id: q for q in old_dev}
    answers = sum(q.answer != by_old[q.id].answer for q in new_dev)
    questions = sum(q.question != by_old[q.id].question for q in new_dev)
    evidence = sum([(e.title, e.pageid) for e in q.necessary_evidence]
                   != [(e.title, e.pageid) for e in by_old[q.id].necessary_evidence]
                   for q in new_dev)
    unpinned_dev = sum(e.pageid is None for q in new_dev for e in q.necessary_evidence)
    pages_dev = sum(len(q.necessary_evidence) for q in new_dev)
    t_old = {q.id: q for q in old_test}
    t_new = {q.id: q for q in new_test}
    t_questions = sum(q.question != t_old[q.id].question for q in new_test)
    t_evidence = sum([e.title for e in q.necessary_evidence]
                     != [e.title for e in t_old[q.id].necessary_evidence] for q in new_test)
    unpinned_test = sum(e.pageid is None for q in new_test for e in q.necessary_evidence)
    print("## what jul26 changed against nov23")
    print(f"dev:  {len(new_dev)} questions (nov23 {len(old_dev)}); {answers} answers, "
          f"{questions} question texts, {evidence} evidence lists changed; "
          f"{unpinned_dev} of {pages_dev} evidence pages unpinned (###TBD###)")
    print(f"test: {len(new_test)} questions (nov23 {len(old_test)}); removed "
          f"{sorted(set(t_old) - set(t_new))}; {t_questions} question texts, {t_evidence} "
          f"evidence lists changed; {unpinned_test} evidence pages unpinned")


def synthetic_pages(n: int, kb: int) -> list[tuple[int, str, str]]:
    """(pageid, title, article HTML) of about ``kb`` KB each: prose, a list and a table."""
    pages = []
    for i in range(n):
        title = f"Synthetic article {i}"
        para = (f"<p><b>{title}</b> is a made-up page number {i} about a place, its people and "
                "its history, with <a href=\"./Elsewhere\">links</a> and figures like 1,234,567."
                "</p>")
        rows = "".join(f"<tr><td>{y}</td><td>{y * 37 % 1000}</td></tr>" for y in range(1950, 2020))
        block = (para * 6 + "<h2>Figures</h2><table><tr><th>Year</th><th>Value</th></tr>"
                 + rows + "</table><ul>" + "<li>an item of a list</li>" * 20 + "</ul>")
        body = block * max(1, kb * 1024 // len(block))
        pages.append((10_000_000 + i, title, f'<div class="mw-parser-output">{body}</div>'))
    return pages


async def fetch_all(client: WikipediaClient, evidence: list[Evidence]) -> tuple[float, set[str]]:
    async with client:
        t0 = time.perf_counter()
        pages = await asyncio.gather(*(client.page(e) for e in evidence))
        return time.perf_counter() - t0, {p.source for p in pages}


def source_rates(n: int, kb: int, concurrency: int) -> None:
    pages = synthetic_pages(n, kb)
    evidence = [Evidence.from_title(pid, title, pid + 1) for pid, title, _ in pages]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        zim = build_zim(root / "wikipedia_bench.zim",
                        [ZimPage(t.replace(" ", "_"), t, article_document(t, h))
                         for _, t, h in pages], redirects={})
        print(f"\n## page-fetch rates: {n} pages of ~{kb} KB HTML, {concurrency} requests at once")
        with KiwixServer(zim) as kiwix:
            def client(cache: str) -> WikipediaClient:
                return WikipediaClient(kiwix_url=kiwix.url, kiwix_book=kiwix.book,
                                       cache_dir=root / cache, max_concurrency=concurrency)

            secs, src = asyncio.run(fetch_all(client("kiwix"), evidence))
            print(f"kiwix-serve, cold (fetch + markdown + cache): {n / secs:7.1f} pages/s {src}")
            secs, src = asyncio.run(fetch_all(client("kiwix"), evidence))
            print(f"page cache ({{pageid}}-dated.md), warm:         {n / secs:7.1f} pages/s {src}")
        wiki_pages = [WikiPage(pid, t, (Revision(pid + 1, "2023-11-01T00:00:00Z", h),))
                      for pid, t, h in pages]
        with MediaWikiServer(pages=wiki_pages) as api:
            secs, src = asyncio.run(fetch_all(WikipediaClient(
                api_url=api.api_url, cache_dir=root / "api", max_concurrency=concurrency),
                evidence))
            print(f"fake MediaWiki API on 127.0.0.1, cold:          {n / secs:7.1f} pages/s {src}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", type=Path, help="folder with both releases (default: the "
                   "mindprobe data cache)")
    p.add_argument("--pages", type=int, default=300)
    p.add_argument("--kb", type=int, default=40)
    p.add_argument("--concurrency", type=int, default=4)
    args = p.parse_args()
    release_changes(args.data_dir)
    source_rates(args.pages, args.kb, args.concurrency)


if __name__ == "__main__":
    main()
