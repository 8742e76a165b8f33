"""The words the Wikipedia client and its sources share: a page (`Evidence`), its text
(`Page`), a title lookup, and the errors (see `mindprobe.resources.wikipedia`). Its own
module so the client and the sources it builds both import it, and neither imports the other's
caller."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from urllib.parse import quote

from mindprobe.core.model import TransientError
from mindprobe.errors import MindprobeError

DEFAULT_API_URL = "https://en.wikipedia.org/w/api.php"
PAGE_URL = "https://en.wikipedia.org/wiki/"
#: The dataset epoch, sent in exactly this ISO form as ``rvstart``.
EPOCH = "2023-11-20T00:00:00+00:00"


class WikipediaError(TransientError):
    """Wikipedia gave no usable answer after bounded retries, or answered with an API error.

    A TransientError: the runner records the item with this message and carries on.
    """


class WikipediaAPIError(WikipediaError):
    """The API answered, but with an error (``code`` as MediaWiki names it, e.g. nosuchrevid)."""

    def __init__(self, code: str, info: str) -> None:
        super().__init__(f"Wikipedia API error {code}: {info}")
        self.code, self.info = code, info


class WikipediaRefused(MindprobeError):
    """The source refuses every request (wrong ``api_url``, blocked User-Agent, unknown Kiwix
    book); stops the run."""


class WikipediaUnreachable(MindprobeError):
    """The source stopped answering altogether (no network, nothing listening): the run stops
    within seconds with one message naming the source and the fixes, records kept."""


@dataclass(frozen=True)
class Evidence:
    """One Wikipedia page; ``revid`` is the revision at the epoch (None until resolved, and
    always None from a Kiwix archive); ``pageid`` None for Kiwix hits and pages the dataset
    leaves unpinned; ``path`` is the page's path in a ZIM when a Kiwix source found it."""

    pageid: int | None
    revid: int | None
    title: str
    url: str
    path: str | None = field(default=None, compare=False)

    @staticmethod
    def page_url(title: str) -> str:
        """The page's URL as upstream's search builds it (spaces become %20)."""
        return PAGE_URL + quote(title)

    @classmethod
    def from_title(cls, pageid: int, title: str, revid: int | None = None) -> Evidence:
        return cls(pageid=pageid, revid=revid, title=title, url=cls.page_url(title))

    @property
    def cache_key(self) -> str:
        """``{pageid}`` (upstream's layout), else ``title-{sha1(title)[:16]}``."""
        if self.pageid is not None:
            return str(self.pageid)
        return "title-" + hashlib.sha1(self.title.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Page:
    """A page's Markdown and where this copy came from: ``cache`` (the page cache), ``api``
    (the dated revision, fetched now) or ``kiwix`` (the archive's copy, fetched now)."""

    text: str
    source: str


@dataclass(frozen=True)
class TitleLookup:
    """An exact-title lookup: ``evidence`` is None when no page had that title at the epoch."""

    query: str
    evidence: Evidence | None
    disambiguation: bool = False
