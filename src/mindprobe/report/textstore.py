"""The transcripts' texts, stored compactly in the page: every paragraph once (a system prompt,
a few-shot head or a passage shared by many items is stored a single time), the whole set
deflated and base64-encoded in one block that the page unpacks in the browser
(`DecompressionStream`, no library, no network) and renders when a transcript is opened.

What a transcript shows is capped (`Shown`): a long reply or a long chat would otherwise make the
page as large as the run's records; the cut says so, and the full text stays in `records.jsonl`.
"""

from __future__ import annotations

import base64
import json
import re
import zlib
from html import escape

#: At most this many characters of one text (a message, a reply) are shown.
TEXT_CHARS = 20_000
#: At most this many characters of one transcript (all its texts together) are shown.
ITEM_CHARS = 100_000
#: A paragraph ends after a blank line: what is stored (and shared) as one piece.
_PARAGRAPH = re.compile(r"(?<=\n\n)(?=[^\n])")


class TextStore:
    """Pieces of text each stored once, and each item's body (HTML whose `<pre data-s>` name
    the pieces of their text); `blob()` is what the page carries."""

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.bodies: list[str] = []
        self._index: dict[str, int] = {}

    def ref(self, text: str) -> str:
        """`text` as a list of piece numbers ("3,17,4"), each paragraph stored once."""
        out = []
        for piece in _PARAGRAPH.split(text) if text else []:
            k = self._index.get(piece)
            if k is None:
                k = self._index[piece] = len(self.pieces)
                self.pieces.append(piece)
            out.append(str(k))
        return ",".join(out)

    def add_body(self, html: str) -> int:
        """Store an item's body; its number, for the page's `data-b`."""
        self.bodies.append(html)
        return len(self.bodies) - 1

    def blob(self) -> str:
        """The pieces and bodies as deflated JSON (zlib format), base64: safe inside any
        element, as it holds no `<` or `&`."""
        doc = json.dumps({"s": self.pieces, "b": self.bodies}, ensure_ascii=False,
                         separators=(",", ":"))
        return base64.b64encode(zlib.compress(doc.encode("utf-8"), 9)).decode("ascii")


def unpack(blob: str) -> dict[str, list[str]]:
    """The pieces ("s") and bodies ("b") of a `blob()` (what the page's script does)."""
    return json.loads(zlib.decompress(base64.b64decode(blob)).decode("utf-8"))


class Shown:
    """Where one item's texts go: escaped inline into its HTML, or into a TextStore; each cut
    to `TEXT_CHARS` and to what is left of the item's `ITEM_CHARS`, the cut said in place."""

    def __init__(self, store: TextStore | None = None, text_chars: int = TEXT_CHARS,
                 item_chars: int = ITEM_CHARS) -> None:
        self.store, self.text_chars, self.left = store, text_chars, item_chars

    def pre(self, text: str, total: int | None = None) -> str:
        """`text` shown, cut where needed; `total`: its full length where the record itself
        keeps only its start (`core.stored_replies`)."""
        keep = min(len(text), self.text_chars, self.left)
        self.left -= keep
        shown = text[:keep]
        html = (f"<pre>{escape(shown)}</pre>" if self.store is None
                else f'<pre data-s="{self.store.ref(shown)}"></pre>')
        whole = max(len(text), total or 0)
        cut = whole - keep
        if cut:
            where = ("the full text is in the run's records.jsonl" if whole == len(text) else
                     f"the run's records.jsonl keeps its first {len(text):,}")
            html += (f'<p class="cut small">… {cut:,} more of its {whole:,} characters are '
                     f"not shown here; {where}.</p>")
        return html
