"""Reading a report back: its data block and its rendered tables."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

DATA_RE = re.compile(r'<script type="application/json" id="mindprobe-data">(.*?)</script>', re.S)


def data_of(html: str) -> dict[str, Any]:
    """The JSON data block of a report page."""
    m = DATA_RE.search(html)
    assert m, "the report has no data block"
    return json.loads(m.group(1))


class Tables(HTMLParser):
    """Every <table> with its cells' text, keyed by data-table (or class for the others)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._key: str | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table" and self._key is None:
            self._key = a.get("data-table") or (a.get("class") or "table")
            while self._key in self.tables:
                self._key += "+"
            self.tables[self._key] = []
        elif tag == "tr" and self._key is not None:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._key = None
        elif tag == "tr" and self._row is not None and self._key is not None:
            self.tables[self._key].append(self._row)
            self._row = None
        elif tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def tables_of(html: str) -> dict[str, list[list[str]]]:
    p = Tables()
    p.feed(html)
    return p.tables


def report(cli, *args: object, out: Path) -> tuple[str, str]:
    """Run `mindprobe report … --out OUT`; (the file's text, stderr)."""
    code, _, err = cli("report", *args, "--out", out)
    assert code == 0, err
    return out.read_text(encoding="utf-8"), err


PACKED_RE = re.compile(r'<script type="application/octet-stream" id="mindprobe-transcripts">'
                       r"(.*?)</script>", re.S)


def transcripts_of(html: str) -> list[str]:
    """Each item's body as the page's script renders it: its texts put back, escaped."""
    from html import escape

    from mindprobe.report.textstore import unpack

    m = PACKED_RE.search(html)
    assert m, "the report has no packed transcripts"
    store = unpack(m.group(1))

    def text(ids: str) -> str:
        return "".join(store["s"][int(k)] for k in ids.split(",") if k)

    return [re.sub(r'<pre data-s="([^"]*)"></pre>',
                   lambda p: f"<pre>{escape(text(p.group(1)))}</pre>", body)
            for body in store["b"]]


def expanded(html: str) -> str:
    """The page with every item's body rendered after it (for checks on the whole text)."""
    return html + "".join(transcripts_of(html))
