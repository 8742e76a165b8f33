"""Text in the report's charts: how wide a label is, wrapping and abbreviating it to the room
it has, legends, and the colours and markers that tell runs apart.

Widths are DejaVu Sans advance widths (the charts ask for DejaVu Sans first, and it is wider than
Arial, Helvetica or Liberation Sans, so a label measured here fits in those too); the browser
test measures the rendered boxes to keep this honest.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

#: Okabe–Ito, readable for the common colour-vision deficiencies and in greyscale print.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
           "#000000")
REF = "#b00020"
FONT = 12

FONT_FAMILY = "'DejaVu Sans',Verdana,Arial,Helvetica,sans-serif"

_W = {" ": .318, ".": .318, ",": .318, ":": .337, ";": .337, "-": .361, "_": .5, "(": .39,
      ")": .39, "[": .39, "]": .39, "/": .337, "%": .95, "·": .318, "…": 1.0, "+": .838,
      "=": .838, "±": .838, "×": .838, "'": .275, '"': .46, "—": 1.0, "–": .5, ">": .838,
      "<": .838, "#": .838, "&": .78, "!": .4, "?": .531, "*": .5, "@": 1.0, "|": .337,
      "≥": .838, "≤": .838, "−": .838, "~": .838}
_LOWER = dict(zip("abcdefghijklmnopqrstuvwxyz",
                  (.613, .635, .55, .635, .615, .352, .635, .634, .278, .278, .579, .278, .974,
                   .634, .612, .635, .635, .411, .521, .392, .634, .592, .818, .592, .592, .525),
                  strict=True))
_UPPER = dict(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                  (.684, .686, .698, .77, .632, .575, .775, .752, .295, .295, .656, .557, .863,
                   .748, .787, .603, .787, .695, .635, .611, .732, .684, .989, .685, .611, .685),
                  strict=True))
_W.update(_LOWER)
_W.update(_UPPER)
_W.update(dict.fromkeys("0123456789", .636))


def text_width(text: str, size: float, bold: bool = False) -> float:
    """Width in px of `text` at font size `size` (a little generous)."""
    em = sum(_W.get(ch, 1.0 if ord(ch) > 0x2E80 else .72) for ch in text)
    return em * size * (1.16 if bold else 1.0) + 1


def fit(text: str, room: float, size: float, bold: bool = False) -> str:
    """`text`, cut with an ellipsis where it is wider than `room` px."""
    if text_width(text, size, bold) <= room:
        return text
    lo, hi = 0, len(text)
    while lo < hi:  # the longest prefix that fits with the ellipsis
        mid = (lo + hi + 1) // 2
        if text_width(text[:mid] + "…", size, bold) <= room:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo].rstrip() + "…"


def wrap(text: str, room: float, size: float, bold: bool = False, max_lines: int = 3
         ) -> list[str]:
    """`text` broken at spaces into lines no wider than `room` px (the last one cut with an
    ellipsis when even `max_lines` are not enough)."""
    lines: list[str] = []
    current = ""
    for word in text.split():
        trial = f"{current} {word}".strip()
        if text_width(trial, size, bold) <= room or not current:
            current = trial
        else:
            lines.append(current)
            current = word
    if current:
        lines.append(current)
    if len(lines) > max_lines:
        lines = [*lines[:max_lines - 1], " ".join(lines[max_lines - 1:])]
    return [fit(line, room, size, bold) for line in lines] or [""]


#: Marker shapes, in the order runs get them.
MARKERS = ("circle", "square", "triangle", "diamond", "down", "cross", "plus", "star")


def marker_for(index: int) -> str:
    return MARKERS[index % len(MARKERS)]


def marker(shape: str, x: float, y: float, color: str, r: float = 4.5, hollow: bool = False,
           tip: str = "") -> str:
    """An SVG marker centred on (x, y); hollow ones (published numbers) are outlined."""
    fill = "#fff" if hollow else color
    style = f'fill="{fill}" stroke="{color}" stroke-width="1.6"'
    title = f"<title>{escape(tip)}</title>" if tip else ""
    if shape == "circle":
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" {style}>{title}</circle>'
    if shape == "square":
        s = r * 0.9
        return (f'<rect x="{x - s:.1f}" y="{y - s:.1f}" width="{2 * s:.1f}" height="{2 * s:.1f}" '
                f"{style}>{title}</rect>")
    pts = {
        "triangle": [(0, -1.15), (1.05, .8), (-1.05, .8)],
        "down": [(0, 1.15), (1.05, -.8), (-1.05, -.8)],
        "diamond": [(0, -1.25), (1.1, 0), (0, 1.25), (-1.1, 0)],
        "cross": [(-.35, -1), (0, -.45), (.35, -1), (1, -.35), (.45, 0), (1, .35), (.35, 1),
                  (0, .45), (-.35, 1), (-1, .35), (-.45, 0), (-1, -.35)],
        "plus": [(-.3, -1), (.3, -1), (.3, -.3), (1, -.3), (1, .3), (.3, .3), (.3, 1), (-.3, 1),
                 (-.3, .3), (-1, .3), (-1, -.3), (-.3, -.3)],
        "star": [(0, -1.2), (.3, -.4), (1.15, -.35), (.5, .2), (.7, 1.05), (0, .55),
                 (-.7, 1.05), (-.5, .2), (-1.15, -.35), (-.3, -.4)],
    }[shape]
    d = " ".join(f"{x + px * r:.1f},{y + py * r:.1f}" for px, py in pts)
    return f'<polygon points="{d}" {style}>{title}</polygon>'


def _text(x: float, y: float, s: str, *, anchor: str = "middle", size: int = FONT,
          weight: str = "normal", fill: str = "#222", rotate: float | None = None,
          tip: str = "") -> str:
    tr = f' transform="rotate({rotate:g} {x:.1f} {y:.1f})"' if rotate else ""
    bold = f' font-weight="{weight}"' if weight != "normal" else ""
    title = f"<title>{escape(tip)}</title>" if tip else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}"'
            f'{bold} fill="{fill}"{tr}>{escape(s)}{title}</text>')



def distinct_colors(colors: Sequence[str | None]) -> list[str]:
    """The colours asked for, with a repeat (two runs of one model) replaced by an unused
    palette colour, so every series of a chart has its own."""
    out: list[str] = []
    for i, c in enumerate(colors):
        c = c or PALETTE[i % len(PALETTE)]
        if c in out:
            c = next((p for p in PALETTE if p not in out), c)
        out.append(c)
    return out



def _legend(names: Sequence[tuple[str, str]], x: float, y: float, width: float,
            shapes: Sequence[str | None] = ()) -> tuple[list[str], float]:
    """Swatches (or markers) left to right, wrapping; long names are cut to the width;
    returns the elements and the height used."""
    out, cx, cy = [], x, y
    for i, (name, color) in enumerate(names):
        label = fit(name, width - 22, 11)
        w = 18 + text_width(label, 11)
        if cx + w > x + width and cx > x:
            cx, cy = x, cy + 18
        shape = shapes[i] if i < len(shapes) else None
        if shape == "dash":
            out.append(f'<line x1="{cx:.1f}" x2="{cx + 12:.1f}" y1="{cy - 3:.1f}" '
                       f'y2="{cy - 3:.1f}" stroke="{color}" stroke-width="1.6" '
                       'stroke-dasharray="4 2"/>')
        elif shape:
            out.append(marker(shape, cx + 6, cy - 3, color, 5))
        else:
            out.append(f'<rect x="{cx:.1f}" y="{cy - 9:.1f}" width="12" height="12" rx="2" '
                       f'fill="{color}"/>')
        out.append(_text(cx + 16, cy + 1, label, anchor="start", size=11,
                         tip=name if label != name else ""))
        cx += w + 12
    return out, cy - y + 18
