"""A ``kiwix-serve`` as a Wikipedia source: a local, dated copy of English Wikipedia (upstream
recommends ``wikipedia_en_all_nopic_2023-09.zim``) instead of the rate-limited API.

What kiwix-serve answers (Debian's kiwix-tools 3.3.0, spec fanoutqa.md §1):

- search: ``/search?pattern=…&books.name=BOOK&pageLength=N&format=xml`` gives an OpenSearch
  RSS feed (``channel/item/title``, ``item/link`` = ``/BOOK/PATH``); newer servers answer Atom
  (``entry/title``, ``entry/link@href``): both are read. An unknown book is HTTP 400.
- pages: ``/raw/BOOK/content/PATH`` is the stored HTML, without kiwix's taskbar; a missing
  path is HTTP 404; a redirect is HTTP 302 to the target's (decorated) URL, whose path is
  read raw again. Paths are titles with spaces as underscores (mwoffliner's layout), so an
  exact-title lookup normalises the title as MediaWiki does (first letter upper case).

What differs from the dated API revisions (documented in the README): the archive is a
snapshot of September 2023, about two months before the dataset epoch (2023-11-20), so a page
edited in between reads as its older text; the ZIM holds no page or revision ids (hits come
back with ``pageid``/``revid`` None; evidence pages keep the dataset's); disambiguation pages
are recognised by their disambiguation box, not by page properties.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, unquote, urlsplit
from xml.etree import ElementTree

from mindprobe.resources.wiki_http import Answer, WikiHTTP
from mindprobe.resources.wiki_types import (
    Evidence,
    TitleLookup,
    WikipediaAPIError,
    WikipediaError,
    WikipediaRefused,
)

DEFAULT_BOOK = "wikipedia_en_all_nopic_2023-09"
BOOK_ENV = "MINDPROBE_KIWIX_BOOK"
FIXES = ("Start it (kiwix-serve --port PORT wikipedia_en_all_nopic_2023-09.zim) and check "
         "--wiki kiwix:URL, or run evidenceprovided from a filled page cache with "
         "--wiki-cache DIR --offline.")
#: Redirect hops followed before a lookup gives up (MediaWiki follows one; ZIMs have chains).
MAX_REDIRECTS = 5
#: Markers of a disambiguation page in mwoffliner's HTML (the {{disambiguation}} box).
DISAMBIGUATION_MARKERS = ('id="disambigbox"', "dmbox-disambig", 'class="disambig')
_ATOM = "{http://www.w3.org/2005/Atom}"


def title_path(title: str) -> str:
    """A title as a ZIM path: MediaWiki's normalisation (first letter upper, underscores)."""
    title = " ".join(title.replace("_", " ").split())
    return (title[:1].upper() + title[1:]).replace(" ", "_")


def path_title(path: str) -> str:
    return unquote(path).replace("_", " ")


class KiwixHTTP(WikiHTTP):
    """Requests to one kiwix-serve and one book in it."""

    def __init__(self, url: str, book: str, **transport: Any) -> None:
        self.url, self.book = url.rstrip("/"), book
        super().__init__(f"the Kiwix server at {self.url}", fixes=FIXES, **transport)

    async def probe(self) -> None:
        """Is the server there, and does it serve the book? (its ``Title`` metadata)"""
        def interpret(answer: Answer) -> None:
            if answer.status == 404:
                raise WikipediaRefused(
                    f"the Kiwix server at {self.url} has no book {self.book!r}; pass the ZIM's "
                    f"name without .zim as --kiwix-book (or ${BOOK_ENV}), e.g. {DEFAULT_BOOK}")
            if answer.status != 200:
                self._refuse_or_fail(answer, "the book's metadata")

        await super().probe(f"{self.url}/raw/{self.book}/meta/Title", None, interpret)

    def _refuse_or_fail(self, answer: Answer, what: str) -> None:
        text = answer.body[:300].decode("utf-8", "replace")
        if answer.status == 400 and "No such book" in text:
            raise WikipediaRefused(
                f"the Kiwix server at {self.url} has no book {self.book!r}; pass the ZIM's "
                f"name without .zim as --kiwix-book (or ${BOOK_ENV}), e.g. {DEFAULT_BOOK}")
        if answer.status in (401, 403):
            raise WikipediaRefused(f"the Kiwix server at {self.url} answered HTTP "
                                   f"{answer.status} to {what}; check --wiki kiwix:URL")
        raise WikipediaError(f"Kiwix server at {self.url}: HTTP {answer.status} for {what}")


class KiwixSource:
    """Search, exact-title lookup and page HTML from one book of a kiwix-serve."""

    kind = "kiwix"

    def __init__(self, http: KiwixHTTP) -> None:
        self.http = http
        #: Pages a lookup read whole, kept until their text is asked for (one request each).
        self._read: dict[str, str] = {}

    @property
    def label(self) -> str:
        return f"kiwix:{self.http.url} (book {self.http.book})"

    def identity(self) -> dict[str, Any]:
        return {"source": "kiwix", "kiwix_url": self.http.url, "kiwix_book": self.http.book}

    async def search(self, query: str, results: int) -> tuple[Evidence, ...]:
        params = {"pattern": query, "books.name": self.http.book, "pageLength": str(results),
                  "format": "xml"}

        def interpret(answer: Answer) -> tuple[Evidence, ...]:
            if answer.status != 200:
                self.http._refuse_or_fail(answer, f"a search for {query!r}")
            return tuple(self._hits(answer.body))[:results]

        return await self.http.request(f"{self.http.url}/search", params, interpret)

    def _hits(self, body: bytes) -> list[Evidence]:
        try:
            root = ElementTree.fromstring(body)
        except ElementTree.ParseError as exc:
            raise WikipediaError(f"Kiwix search answer is not XML ({exc})") from None
        hits = []
        for item in root.iter("item"):  # RSS (kiwix-serve 3.x)
            hits.append((item.findtext("title") or "", item.findtext("link") or ""))
        for entry in root.iter(f"{_ATOM}entry"):  # Atom (newer kiwix-serve)
            link = entry.find(f"{_ATOM}link")
            hits.append((entry.findtext(f"{_ATOM}title") or "",
                         link.get("href", "") if link is not None else ""))
        out = []
        for title, link in hits:
            path = self._path_of(link)
            if title and path:
                out.append(Evidence(None, None, title.strip(), Evidence.page_url(title.strip()),
                                    path=path))
        return out

    def _path_of(self, link: str) -> str | None:
        """``/BOOK/A/Pat_Burrell``, ``/content/BOOK/…`` or a full URL -> ``A/Pat_Burrell``."""
        path = urlsplit(link).path
        for prefix in (f"/raw/{self.http.book}/content/", f"/content/{self.http.book}/",
                       f"/{self.http.book}/"):
            if path.startswith(prefix):
                return path[len(prefix):]
        return None

    async def _raw(self, path: str) -> tuple[str, str] | None:
        """(final path, HTML) of a page, redirects followed; None when there is no such page."""
        for _ in range(MAX_REDIRECTS + 1):
            url = f"{self.http.url}/raw/{self.http.book}/content/{quote(path)}"

            def interpret(answer: Answer, path: str = path) -> tuple[int, str]:
                if answer.status == 404:
                    return 404, ""
                if answer.status in (301, 302, 303, 307, 308):
                    return 302, answer.headers.get("Location", "")
                if answer.status != 200:
                    self.http._refuse_or_fail(answer, f"page {path!r}")
                return 200, answer.body.decode("utf-8", "replace")

            status, text = await self.http.request(url, None, interpret, redirects=False)
            if status == 404:
                return None
            if status == 200:
                return path, text
            target = self._path_of(text) or unquote(urlsplit(text).path).rsplit("/", 1)[-1]
            if not target or target == path:
                return None
            path = unquote(target)
        raise WikipediaError(f"Kiwix page {path!r}: more than {MAX_REDIRECTS} redirects")

    async def lookup(self, title: str) -> TitleLookup:
        found = await self._raw(title_path(title))
        if found is None:
            return TitleLookup(title, None)
        path, html = found
        self._read[path] = html
        name = path_title(path.removeprefix("A/"))
        evidence = Evidence(None, None, name, Evidence.page_url(name), path=path)
        return TitleLookup(title, evidence, any(m in html for m in DISAMBIGUATION_MARKERS))

    async def revid(self, evidence: Evidence) -> None:
        return None  # the archive keeps no revision ids

    async def html(self, evidence: Evidence, revid: int | None) -> str:
        path = evidence.path or title_path(evidence.title)
        if path in self._read:
            return self._read.pop(path)
        found = await self._raw(path)
        if found is None and evidence.path is None:
            found = await self._raw(f"A/{path}")  # books in the old namespace layout
        if found is None:
            raise WikipediaAPIError("missing", f"no page titled {evidence.title!r} in the "
                                    f"Kiwix book {self.http.book!r} at {self.http.url}")
        return found[1]

    def article(self, html: str) -> str:
        """The stored page as the API's parse output looks: the article body only."""
        from mindprobe.resources.wiki_markdown import article_body  # bs4: loaded on use

        return article_body(html)

    def options(self, html: str) -> list[str]:
        from mindprobe.resources.wiki_markdown import list_item_links

        return list_item_links(html, relative=True)
