"""A real ``kiwix-serve`` on 127.0.0.1 over a small ZIM built here, for testing the Kiwix source
without the internet (or the 100 GB archive).

:func:`build_zim` writes pages (and redirects) with ``libzim``, shaped like mwoffliner's
Wikipedia ZIMs: paths are titles with underscores, each page a whole HTML document whose body
holds the title heading and the article. :class:`KiwixServer` starts Debian's ``kiwix-serve``
(package ``kiwix-tools``) on a free port and waits until it answers. The default pages are the
fake MediaWiki's (:mod:`mindprobe.testing.wiki_fixtures`) at their dated revision, so a page
read through either source can be compared.

``python -m mindprobe.testing.kiwix OUT.zim`` writes that ZIM (for trying ``--wiki kiwix:``).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mindprobe.testing.wiki_fixtures import (
    FANOUTQA_DEV_PAGES,
    PAGES,
    REDIRECTS,
    WikiPage,
)

EPOCH_STAMP = "2023-11-20T00:00:00Z"
DISAMBIGUATION_BOX = ('<div id="disambigbox" class="metadata plainlinks dmbox dmbox-disambig">'
                      "This disambiguation page lists articles associated with the title.</div>")


@dataclass(frozen=True)
class ZimPage:
    """One article as a ZIM stores it: its path, title and whole HTML document."""

    path: str
    title: str
    html: str


def zim_path(title: str) -> str:
    return title.replace(" ", "_")


def article_document(title: str, body: str) -> str:
    """A page as mwoffliner writes it: a document with the title heading above the article."""
    return (f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{title}</title>"
            f"</head><body><h1 id=\"titleHeading\">{title}</h1>{body}</body></html>")


def _wiki_links_relative(html: str) -> str:
    return html.replace('href="/wiki/', 'href="./')


def pages_from_wiki(pages: Sequence[WikiPage]) -> list[ZimPage]:
    """The fixture pages at their newest revision before the epoch (as an archive holds them);
    pages created after the epoch are left out."""
    out = []
    for page in pages:
        dated = [r for r in page.revisions if r.timestamp <= EPOCH_STAMP]
        if not dated:
            continue
        body = _wiki_links_relative(dated[-1].html or "")
        if page.disambiguation:
            body += DISAMBIGUATION_BOX
        out.append(ZimPage(zim_path(page.title), page.title, article_document(page.title, body)))
    return out


DEFAULT_PAGES: tuple[WikiPage, ...] = PAGES + FANOUTQA_DEV_PAGES


def build_zim(target: Path, pages: Iterable[ZimPage] | None = None,
              redirects: Mapping[str, str] | None = None) -> Path:
    """Write a ZIM of ``pages`` (default: the fixture pages) plus ``redirects`` (title ->
    target title) with a full-text index; its book name is the file's stem."""
    from libzim.writer import Creator, Hint, Item, StringProvider  # type: ignore[import-not-found]

    class Article(Item):  # type: ignore[misc]
        def __init__(self, page: ZimPage) -> None:
            super().__init__()
            self.page = page

        def get_path(self) -> str:
            return self.page.path

        def get_title(self) -> str:
            return self.page.title

        def get_mimetype(self) -> str:
            return "text/html"

        def get_contentprovider(self) -> StringProvider:
            return StringProvider(self.page.html)

        def get_hints(self) -> dict:
            return {Hint.FRONT_ARTICLE: True}

    chosen = list(pages) if pages is not None else pages_from_wiki(DEFAULT_PAGES)
    links = dict(REDIRECTS if redirects is None else redirects)
    target = Path(target)
    target.unlink(missing_ok=True)
    with Creator(str(target)).config_indexing(True, "eng") as creator:
        creator.set_mainpath(chosen[0].path)
        for page in chosen:
            creator.add_item(Article(page))
        for source, dest in links.items():
            creator.add_redirection(zim_path(source), source, zim_path(dest),
                                    {Hint.FRONT_ARTICLE: True})
        for key, value in {"Name": target.stem, "Title": "mindprobe test Wikipedia",
                           "Language": "eng", "Creator": "mindprobe", "Publisher": "mindprobe",
                           "Date": "2023-09-01", "Description": "made-up test pages"}.items():
            creator.add_metadata(key, value)
    return target


def kiwix_missing() -> str | None:
    """Why a real kiwix-serve cannot be run here (None when it can)."""
    if shutil.which("kiwix-serve") is None:
        return "kiwix-serve not installed (Debian: apt-get install kiwix-tools)"
    try:
        import libzim.writer  # noqa: F401  # type: ignore[import-not-found]
    except ImportError:
        return "libzim not installed (pip install libzim)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class KiwixServer:
    """``kiwix-serve`` over one ZIM on 127.0.0.1; ``url`` and ``book`` once started."""

    def __init__(self, zim: Path, startup_timeout: float = 20.0) -> None:
        self.zim = Path(zim)
        self.book = self.zim.stem
        self.startup_timeout = startup_timeout
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> KiwixServer:
        for _ in range(3):  # a port taken between choosing and binding: try another
            self.port = _free_port()
            self.proc = subprocess.Popen(
                ["kiwix-serve", "--address", "127.0.0.1", "--port", str(self.port),
                 str(self.zim)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if self._wait_ready():
                return self
            self._stop()
        raise RuntimeError(f"kiwix-serve did not start on {self.zim}")

    def _wait_ready(self) -> bool:
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.proc is None or self.proc.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(f"{self.url}/raw/{self.book}/meta/Title",
                                            timeout=1.0):
                    return True
            except OSError:
                time.sleep(0.05)
        return False

    def _stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None and self.proc.stderr is not None:
            self.proc.stderr.close()
        self.proc = None

    def __exit__(self, *exc_info: object) -> None:
        self._stop()


if __name__ == "__main__":
    out = build_zim(Path(sys.argv[1] if len(sys.argv) > 1 else "mindprobe_test.zim"))
    print(f"wrote {out} (book {out.stem}); serve it with: kiwix-serve --port 8080 {out}")
