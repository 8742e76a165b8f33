"""HTML -> Markdown as FanOutQA caches it: markdownify 0.11 with ATX headings and 4 overrides."""

from __future__ import annotations

from importlib.metadata import version

import pytest

from mindprobe.resources.wiki_markdown import html_to_markdown, list_item_links


def test_markdownify_is_the_pinned_minor_version():
    assert version("markdownify").startswith("0.11.")


@pytest.mark.parametrize(
    ("html", "markdown"),
    [
        ('<img alt="A cat" src="cat.png">', "![A cat](image)"),
        ('<img src="cat.png">', "![](image)"),
        ('<img alt="" src="cat.png">', "![](image)"),
        ('<p>see <a href="/wiki/X" title="X">the X</a> now</p>', "see the X now\n\n"),
        ('<a href="https://example.org">https://example.org</a>', "https://example.org"),
        ("<div> <b>hi</b> </div>after", "**hi**\nafter"),
        ("<div>  \n </div>after", "after"),
        ("<div><div>inner</div></div>", "inner\n"),
        (
            "<p>a</p><script>var x = '<b>';</script><style>p { color: red }</style><p>b</p>",
            "a\n\nb\n\n",
        ),
        ("<h2>Title</h2><h3>Sub</h3>", "## Title\n\n### Sub\n\n"),
        ("<p>snake_case and 2*3</p>", "snake\\_case and 2\\*3\n\n"),  # markdownify's escaping
    ],
)
def test_overrides(html, markdown):
    assert html_to_markdown(html) == markdown


def test_list_item_links_are_disambiguation_options():
    html = (
        '<ul><li><a href="/wiki/Mercury_(planet)">Mercury</a>, a planet</li>'
        '<li>The element <a href="/wiki/Mercury_(element)#Uses">mercury</a> and '
        '<a href="/wiki/Metal">metal</a></li>'
        '<li><a href="/wiki/File:Hg.png">icon</a> <a href="/wiki/Star_Wars:_Episode_I">SW</a></li>'
        '<li><a class="new" href="/wiki/Mercury_(band)">red link</a></li>'
        '<li><a href="/wiki/Category_talk:Planets">talk</a></li>'
        '<li><a href="#top">top</a> no article</li>'
        '<li><a href="/wiki/Mercury_(planet)">again</a></li></ul>'
    )
    assert list_item_links(html) == [
        "Mercury (planet)",
        "Mercury (element)",
        "Star Wars: Episode I",
    ]
