"""Pages the fake MediaWiki server serves by default: small, made up, shaped like the real ones.

Made-up text (not Wikipedia's), real-looking ids. What each page is for:

- "Python (programming language)": three revisions around the epoch (2023-11-20), so a client
  that ignores ``rvstart`` gets the wrong text; its dated HTML exercises every Markdown override.
- "Monty Python": a plain page that also matches searches for "python".
- "Python": a disambiguation page listing options (plus a red link and a Help: link to skip).
- "Zürich": non-ASCII text, reached through the redirect "Zurich".
- "Tomorrow's page": created after the epoch, so it has no dated revision.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Revision:
    revid: int
    timestamp: str  # ISO 8601, UTC, as MediaWiki prints it ("2023-11-19T23:59:59Z")
    html: str | None  # None: parse answers without "text" (a suppressed revision)


@dataclass(frozen=True)
class WikiPage:
    pageid: int
    title: str
    revisions: tuple[Revision, ...]  # oldest first
    disambiguation: bool = False


PYTHON_DATED_HTML = """<div class="mw-parser-output">
<style>.mw-parser-output .hatnote{font-style:italic}</style>
<div role="note" class="hatnote">For the snake, see <a href="/wiki/Pythonidae">Pythonidae</a>.</div>
<div class="empty-box"> </div>
<p><b>Python</b> is a <a href="/wiki/High-level_programming_language">high-level</a>
programming language created by <a href="/wiki/Guido_van_Rossum">Guido van Rossum</a>.</p>
<figure><img src="//upload.example/logo.png" alt="Python logo"><img src="//up.example/x.png">
</figure>
<script>var dated = "epoch";</script>
<h2>History</h2>
<p>Development started in the late 1980s; version 3.12 was released in October 2023.</p>
<h3>Releases</h3>
<ul><li>Python 2.0 (2000)</li><li>Python 3.0 (2008)</li></ul>
</div>"""

PAGES: tuple[WikiPage, ...] = (
    WikiPage(
        23862,
        "Python (programming language)",
        (
            Revision(1180000000, "2023-10-01T12:00:00Z", "<p>An old revision of Python.</p>"),
            Revision(1185000000, "2023-11-19T23:59:59Z", PYTHON_DATED_HTML),
            Revision(1190000000, "2023-12-24T08:00:00Z", "<p>A revision after the epoch.</p>"),
        ),
    ),
    WikiPage(
        18942,
        "Monty Python",
        (
            Revision(
                1184000001,
                "2023-11-01T00:00:00Z",
                "<p><b>Monty Python</b> were a British comedy troupe; the Python language "
                "is named after them.</p>",
            ),
        ),
    ),
    WikiPage(
        46332325,
        "Python",
        (
            Revision(
                1183000002,
                "2023-10-20T10:00:00Z",
                '<div class="mw-parser-output"><p><b>Python</b> may refer to:</p><ul>'
                '<li><a href="/wiki/Pythonidae" title="Pythonidae">Pythonidae</a>, a family '
                "of snakes</li>"
                '<li><a href="/wiki/Python_(programming_language)">Python (programming '
                "language)</a></li>"
                '<li><a href="/wiki/Monty_Python">Monty Python</a>, comedy troupe</li>'
                '<li><a href="/w/index.php?title=Python_(film)&amp;action=edit&amp;redlink=1" '
                'class="new">Python (film)</a></li>'
                '<li><a href="/wiki/Monty_Python#Films">Monty Python films</a></li>'
                "</ul><p>See <a "
                'href="/wiki/Help:Disambiguation">Help:Disambiguation</a>.</p>'
                '<ul><li><a href="/wiki/Help:Disambiguation">Help</a></li></ul></div>',
            ),
        ),
        disambiguation=True,
    ),
    WikiPage(
        37229,
        "Zürich",
        (
            Revision(
                1184500003,
                "2023-11-10T09:30:00Z",
                "<p><b>Zürich</b> is the largest city in Switzerland — about 420 000 people "
                "live there (Züri).</p>",
            ),
        ),
    ),
    WikiPage(
        71000001,
        "Tomorrow's page",
        (Revision(1195000004, "2024-01-05T00:00:00Z", "<p>Written after the epoch.</p>"),),
    ),
)

#: Redirect title -> target title.
REDIRECTS: dict[str, str] = {
    "Python language": "Python (programming language)",
    "Python programming language": "Python (programming language)",
    "Zurich": "Zürich",
}
