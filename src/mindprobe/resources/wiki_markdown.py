"""Wikipedia HTML -> the Markdown FanOutQA caches and chunks (spec fanoutqa.md §3).

markdownify 0.11.x with ATX headings plus four overrides: images become ``![alt](image)``, links
keep only their text, a ``<div>`` becomes its stripped inner text plus a newline (nothing when
empty), and ``<script>``/``<style>`` vanish. Byte-identical output to the published cache depends
on the markdownify minor version, so it is pinned (``markdownify~=0.11.6``).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from bs4 import BeautifulSoup
from markdownify import ATX, MarkdownConverter

#: Titles outside the article namespace: English Wikipedia's namespaces, aliases and talk pages.
_NON_ARTICLE = re.compile(
    r"(?:(?:User|Wikipedia|WP|File|Image|MediaWiki|Template|Help|Category|Portal|Draft"
    r"|TimedText|Module)(?: talk)?|Talk|Media|Special):"
)


_BODY_OPEN = re.compile(r"<body\b[^>]*>", re.IGNORECASE)
#: The title heading mwoffliner puts above the article (the API's parse output has none).
_TITLE_HEADING = re.compile(
    r"<h1\b[^>]*\b(?:id=\"(?:titleHeading|firstHeading)\"|class=\"article-header\")[^>]*>"
    r".*?</h1>", re.IGNORECASE | re.DOTALL)


class WikiMarkdownConverter(MarkdownConverter):
    """markdownify's converter with FanOutQA's overrides; ATX headings unless told otherwise."""

    def __init__(self, **options: Any) -> None:
        options.setdefault("heading_style", ATX)
        super().__init__(**options)

    def convert_img(self, el: Any, text: str, convert_as_inline: bool) -> str:
        return f"![{el.attrs.get('alt') or ''}](image)"

    def convert_a(self, el: Any, text: str, convert_as_inline: bool) -> str:
        return text

    def convert_div(self, el: Any, text: str, convert_as_inline: bool) -> str:
        inner = text.strip()
        return f"{inner}\n" if inner else ""

    def convert_script(self, el: Any, text: str, convert_as_inline: bool) -> str:
        return ""

    def convert_style(self, el: Any, text: str, convert_as_inline: bool) -> str:
        return ""


def html_to_markdown(html: str) -> str:
    """Convert one page's parsed HTML (``parse.text["*"]``) to the cached Markdown."""
    return WikiMarkdownConverter().convert(html)


def article_body(html: str) -> str:
    """A whole stored page (a ZIM's HTML document) cut to what the API's parse output holds:
    the body's content, without the document head and the title heading kiwix pages carry.
    (String slicing: parsing the page twice would double the conversion's cost.)"""
    start = _BODY_OPEN.search(html)
    end = html.rfind("</body>")
    body = html[start.end() if start else 0:end if end >= 0 else len(html)]
    return _TITLE_HEADING.sub("", body, count=1)


def list_item_links(html: str, relative: bool = False) -> list[str]:
    """Article titles linked first in each ``<li>``, in page order, without repeats.

    This is how a disambiguation page lists its options. Links outside the main namespace
    (``File:``, ``Help:`` ...), red links and in-page anchors are skipped. ``relative``: links
    as a ZIM stores them (``Pat_Burrell``, ``./Pat_Burrell``), not ``/wiki/Pat_Burrell``.
    """
    seen: dict[str, None] = {}
    for item in BeautifulSoup(html, "html.parser").find_all("li"):
        for link in item.find_all("a", href=True):
            href = link["href"]
            if relative:
                href = _wiki_href(href)
            title = _article_title(href, link.get("class") or [])
            if title is not None:
                seen.setdefault(title, None)
                break
    return list(seen)


def _wiki_href(href: str) -> str:
    """A ZIM's relative link as the API's ``/wiki/`` one (others left to be skipped)."""
    if not href or href.startswith(("#", "/")) or "://" in href or href.startswith("mailto:"):
        return ""
    while href.startswith(("./", "../")):
        href = href.split("/", 1)[1]
    return "/wiki/" + href.removeprefix("A/")


def _article_title(href: str, classes: list[str]) -> str | None:
    if not href.startswith("/wiki/") or "new" in classes:
        return None
    title = unquote(href[len("/wiki/") :].split("#", 1)[0]).replace("_", " ")
    if not title or _NON_ARTICLE.match(title):
        return None
    return title
