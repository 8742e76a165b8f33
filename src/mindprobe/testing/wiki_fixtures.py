"""Pages the fake MediaWiki server serves by default: small, made up, shaped like the real ones.

Made-up text (not Wikipedia's), real-looking ids. What each page is for:

- "Python (programming language)": three revisions around the epoch (2023-11-20), so a client
  that ignores ``rvstart`` gets the wrong text; its dated HTML exercises every Markdown override.
- "Monty Python": a plain page that also matches searches for "python".
- "Python": a disambiguation page listing options (plus a red link and a Help: link to skip).
- "Zürich": non-ASCII text, reached through the redirect "Zurich".
- "Tomorrow's page": created after the epoch, so it has no dated revision.

``FANOUTQA_DEV_PAGES`` (not served unless passed as ``pages``): the evidence pages of the first
two FanOutQA dev questions (7dcbbbdc7f1120cd, 2120afba8009bad3) under their real pageids, titles
and dated revids, with short made-up text carrying the facts those questions ask for.
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


def _page(pageid: int, revid: int, title: str, paragraphs: tuple[str, ...]) -> WikiPage:
    """A one-revision page dated just before the epoch, with a heading per paragraph."""
    body = "".join(f"<h2>Part {i}</h2><p>{text}</p>" for i, text in enumerate(paragraphs, 1))
    html = f'<div class="mw-parser-output"><p><b>{title}</b> (fixture page).</p>{body}</div>'
    return WikiPage(pageid, title, (Revision(revid, "2023-11-19T12:00:00Z", html),))


def _player(name: str, team: str, bats: str, year: int) -> tuple[str, ...]:
    return (
        f"{name} is an American former professional baseball player who debuted with the "
        f"{team} in {year}.",
        f"Bats: {bats}. Throws: {bats}. {name} was a first-round pick in the 1998 draft.",
        "Career statistics are listed by season in the tables of the full article.",
    )


def _film(title: str, year: int, gross: str) -> tuple[str, ...]:
    return (
        f"{title} is a {year} American epic space opera film in the Star Wars franchise.",
        f"Box office: the film grossed {gross} worldwide during its theatrical run.",
        "Reception, themes and the production history are covered in later sections.",
    )


#: Evidence of dev questions 7dcbbbdc7f1120cd (1998 draft, batting hands) and 2120afba8009bad3
#: (Star Wars box office): real pageid, title and dated revid; text made up.
FANOUTQA_DEV_PAGES: tuple[WikiPage, ...] = (
    _page(18468611, 1172527864, "1998 Major League Baseball draft", (
        "The 1998 Major League Baseball draft took place in June 1998.",
        "First round picks: 1. Pat Burrell (Philadelphia Phillies); 2. Mark Mulder (Oakland "
        "Athletics); 3. Corey Patterson (Chicago Cubs); 4. Jeff Austin (Kansas City Royals); "
        "5. J. D. Drew (St. Louis Cardinals).",
    )),
    _page(428791, 1184558033, "Pat Burrell", _player("Pat Burrell", "Phillies", "Right", 2000)),
    _page(1224672, 1169013077, "Mark Mulder", _player("Mark Mulder", "Athletics", "Left", 2000)),
    _page(966752, 1178045549, "Corey Patterson",
          _player("Corey Patterson", "Cubs", "Left", 2000)),
    _page(21964523, 1160882537, "Jeff Austin (baseball)",
          _player("Jeff Austin", "Royals", "Right", 2001)),
    _page(1084979, 1169999583, "J. D. Drew", _player("J. D. Drew", "Cardinals", "Left", 1998)),
    _page(26678, 1185937156, "Star Wars", (
        "Star Wars is a media franchise created by George Lucas.",
        "The prequel trilogy: The Phantom Menace, Attack of the Clones, Revenge of the Sith. "
        "The sequel trilogy: The Force Awakens, The Last Jedi, The Rise of Skywalker.",
    )),
    _page(50793, 1185883860, "Star Wars: Episode I \u2013 The Phantom Menace",
          _film("The Phantom Menace", 1999, "$1.027 billion")),
    _page(50957, 1185896387, "Star Wars: Episode II \u2013 Attack of the Clones",
          _film("Attack of the Clones", 2002, "$653.8 million")),
    _page(55447, 1185897706, "Star Wars: Episode III \u2013 Revenge of the Sith",
          _film("Revenge of the Sith", 2005, "$868.4 million")),
    _page(14723194, 1185889585, "Star Wars: The Force Awakens",
          _film("The Force Awakens", 2015, "$2.071 billion")),
    _page(43910621, 1185873947, "Star Wars: The Last Jedi",
          _film("The Last Jedi", 2017, "$1.334 billion")),
    _page(43910733, 1185946963, "Star Wars: The Rise of Skywalker",
          _film("The Rise of Skywalker", 2019, "$1.077 billion")),
)
