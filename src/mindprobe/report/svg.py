"""A small inline-SVG plotting helper: grouped bar charts with CI whiskers, step/line charts,
and horizontal interval charts. Output is a plain `<svg>` string (no xmlns, no external
fonts or scripts), sized by its viewBox so it scales with the page and prints crisply.

Every piece of text goes through `html.escape`; values that are None or NaN are skipped
(a missing bar is labelled "n/a", never drawn as zero).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

#: Okabe–Ito, readable for the common colour-vision deficiencies and in greyscale print.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
           "#000000")
AXIS = "#444"
GRID = "#e3e3e3"
REF = "#b00020"
FONT = 12


@dataclass
class Series:
    """One coloured series: a value per category with an optional CI per value."""

    name: str
    values: Sequence[float | None]
    lows: Sequence[float | None] | None = None
    highs: Sequence[float | None] | None = None
    color: str | None = None


@dataclass
class Line:
    """One line of a line chart."""

    name: str
    xs: Sequence[float]
    ys: Sequence[float]
    color: str | None = None
    dashed: bool = False


def ok(v: float | None) -> bool:
    return v is not None and not (isinstance(v, float) and math.isnan(v))


def fmt_num(v: float) -> str:
    if v == 0:
        return "0"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    if abs(v) >= 10:
        return f"{v:.0f}" if float(v).is_integer() else f"{v:.1f}"
    return f"{v:.3g}"


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """Round tick values covering [lo, hi] (about n of them)."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / max(n, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.floor(lo / step + 1e-9)
    last = math.ceil(hi / step - 1e-9)
    return [round(i * step, 10) for i in range(first, last + 1)]


def _range(values: Sequence[float], y_range: tuple[float, float] | None,
           zero: bool = True) -> tuple[float, float, list[float]]:
    if y_range is not None:
        lo, hi = y_range
        return lo, hi, nice_ticks(lo, hi)
    vals = [v for v in values if ok(v)] or [0.0, 1.0]
    lo, hi = min(vals), max(vals)
    if zero:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    if hi == lo:
        hi = lo + (abs(lo) or 1.0)
    ticks = nice_ticks(lo, hi)
    return ticks[0], ticks[-1], ticks


def _text(x: float, y: float, s: str, *, anchor: str = "middle", size: int = FONT,
          weight: str = "normal", fill: str = "#222", rotate: float | None = None,
          tip: str = "") -> str:
    tr = f' transform="rotate({rotate:g} {x:.1f} {y:.1f})"' if rotate else ""
    bold = f' font-weight="{weight}"' if weight != "normal" else ""
    title = f"<title>{escape(tip)}</title>" if tip else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}"'
            f'{bold} fill="{fill}"{tr}>{escape(s)}{title}</text>')


def _title(x: float, title: str, room: float) -> str:
    """The chart's title, cut to fit its width (the whole of it as a tooltip)."""
    fit = max(10, int(room / 7.2))
    short = title if len(title) <= fit else title[: fit - 1] + "…"
    return _text(x, 18, short, anchor="start", size=13, weight="600",
                 tip=title if short != title else "")


def _svg(width: int, height: int, body: list[str], title: str, label: str = "") -> str:
    aria = escape(label or title)
    head = (f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" '
            f'height="{height}" role="img" aria-label="{aria}" font-family="inherit">')
    return head + "".join(body) + "</svg>"


def _legend(names: Sequence[tuple[str, str]], x: float, y: float, width: float) -> tuple[
        list[str], float]:
    """Swatches left to right, wrapping; returns the elements and the height used."""
    out, cx, cy = [], x, y
    for name, color in names:
        w = 22 + 7 * len(name)
        if cx + w > x + width and cx > x:
            cx, cy = x, cy + 18
        out.append(f'<rect x="{cx:.1f}" y="{cy - 9:.1f}" width="12" height="12" rx="2" '
                   f'fill="{color}"/>')
        out.append(_text(cx + 16, cy + 1, name, anchor="start", size=11))
        cx += w + 10
    return out, cy - y + 18


def _y_axis(body: list[str], ticks: Sequence[float], scale, left: float, right: float,
            y_label: str, top: float, bottom: float, percent: bool) -> None:
    for t in ticks:
        y = scale(t)
        body.append(f'<line x1="{left:.1f}" x2="{right:.1f}" y1="{y:.1f}" y2="{y:.1f}" '
                    f'stroke="{GRID}"/>')
        label = f"{fmt_num(100 * t)}%" if percent else fmt_num(t)
        body.append(_text(left - 6, y + 4, label, anchor="end", size=11, fill=AXIS))
    body.append(f'<line x1="{left:.1f}" x2="{left:.1f}" y1="{top:.1f}" y2="{bottom:.1f}" '
                f'stroke="{AXIS}"/>')
    if y_label:
        mid = (top + bottom) / 2
        body.append(_text(14, mid, y_label, size=11, fill=AXIS, rotate=-90))


def bar_chart(categories: Sequence[str], series: Sequence[Series], *, title: str = "",
              y_label: str = "", x_label: str = "", y_range: tuple[float, float] | None = None,
              refs: Sequence[tuple[float, str]] = (),
              category_refs: Sequence[float | None] | None = None,
              category_ref_label: str = "chance", percent: bool = False,
              width: int = 760, height: int = 320) -> str:
    """Grouped vertical bars (one group per category, one bar per series) with CI whiskers.

    `refs` are horizontal reference lines across the plot (e.g. chance); `category_refs` a
    short dashed mark per category (e.g. a chance level that depends on the category).
    """
    n_cat, n_ser = len(categories), max(len(series), 1)
    allv: list[float] = []
    for s in series:
        for seq in (s.values, s.lows or (), s.highs or ()):
            allv += [v for v in seq if ok(v)]
    allv += [r for r, _ in refs] + [r for r in (category_refs or ()) if ok(r)]
    lo, hi, ticks = _range(allv, y_range)
    rotate = n_cat > 4 and max((len(c) for c in categories), default=0) * 7 > (width - 80) / max(
        n_cat, 1)
    label_room = min(110, 8 + 6 * max((len(c) for c in categories), default=0)) if rotate else 22
    legend_names = [(s.name, s.color or PALETTE[i % len(PALETTE)]) for i, s in enumerate(series)]
    left, right, top = 62, width - 14, 30 if title else 12
    legend, legend_h = _legend(legend_names, left, 0, right - left) if series else ([], 0)
    bottom = height - label_room - (16 if x_label else 0) - legend_h - 6

    def scale(v: float) -> float:
        return bottom - (v - lo) / (hi - lo) * (bottom - top)

    body: list[str] = []
    if title:
        body.append(_title(left, title, right - left))
    _y_axis(body, ticks, scale, left, right, y_label, top, bottom, percent)
    group = (right - left) / max(n_cat, 1)
    bar = min(42.0, group * 0.8 / n_ser)
    base = scale(min(max(0.0, lo), hi))
    for ci, cat in enumerate(categories):
        gx = left + ci * group + (group - bar * n_ser) / 2
        for si, s in enumerate(series):
            color = s.color or PALETTE[si % len(PALETTE)]
            v = s.values[ci] if ci < len(s.values) else None
            x = gx + si * bar
            if not ok(v):
                body.append(_text(x + bar / 2, base - 4, "n/a", size=9, fill="#888"))
                continue
            y = scale(v)
            y0, h = min(y, base), abs(base - y)
            lo_v = s.lows[ci] if s.lows and ci < len(s.lows) else None
            hi_v = s.highs[ci] if s.highs and ci < len(s.highs) else None
            tip = f"{s.name} · {cat}: {fmt_num(100 * v) + '%' if percent else fmt_num(v)}"
            if ok(lo_v) and ok(hi_v):
                tip += (f" [{fmt_num(100 * lo_v)}, {fmt_num(100 * hi_v)}]%" if percent else
                        f" [{fmt_num(lo_v)}, {fmt_num(hi_v)}]")
            body.append(f'<rect x="{x + 1:.1f}" y="{y0:.1f}" width="{max(bar - 2, 1):.1f}" '
                        f'height="{max(h, 0.5):.1f}" fill="{color}"><title>{escape(tip)}</title>'
                        "</rect>")
            if ok(lo_v) and ok(hi_v):
                xm = x + bar / 2
                ya, yb = scale(max(min(lo_v, hi), lo)), scale(max(min(hi_v, hi), lo))
                cap = min(6.0, bar / 3)
                body.append(f'<path d="M{xm:.1f} {ya:.1f}V{yb:.1f}M{xm - cap:.1f} {ya:.1f}'
                            f'H{xm + cap:.1f}M{xm - cap:.1f} {yb:.1f}H{xm + cap:.1f}" '
                            f'stroke="#222" stroke-width="1.2" fill="none"/>')
        if category_refs and ci < len(category_refs) and ok(category_refs[ci]):
            y = scale(category_refs[ci])
            body.append(f'<line x1="{left + ci * group + 3:.1f}" x2="{left + (ci + 1) * group - 3:.1f}"'
                        f' y1="{y:.1f}" y2="{y:.1f}" stroke="{REF}" stroke-width="1.5" '
                        f'stroke-dasharray="5 3"><title>{escape(category_ref_label)} '
                        f'{escape(fmt_num(category_refs[ci]))}</title></line>')
        cx = left + (ci + 0.5) * group
        if rotate:
            body.append(_text(cx + 4, bottom + 12, cat, anchor="end", size=11, rotate=-35))
        else:
            body.append(_text(cx, bottom + 16, cat, size=11))
    for value, label in refs:
        y = scale(value)
        body.append(f'<line x1="{left:.1f}" x2="{right:.1f}" y1="{y:.1f}" y2="{y:.1f}" '
                    f'stroke="{REF}" stroke-width="1.2" stroke-dasharray="6 4"/>')
        body.append(_text(right - 2, y - 4, label, anchor="end", size=10, fill=REF))
    if lo < 0 < hi:
        body.append(f'<line x1="{left:.1f}" x2="{right:.1f}" y1="{base:.1f}" y2="{base:.1f}" '
                    f'stroke="{AXIS}"/>')
    else:
        body.append(f'<line x1="{left:.1f}" x2="{right:.1f}" y1="{bottom:.1f}" '
                    f'y2="{bottom:.1f}" stroke="{AXIS}"/>')
    if x_label:
        body.append(_text((left + right) / 2, bottom + label_room + 12, x_label, size=11,
                          fill=AXIS))
    if category_refs and any(ok(r) for r in category_refs):
        legend_names.append((f"{category_ref_label} (dashed)", REF))
        legend, legend_h = _legend(legend_names, left, 0, right - left)
    if legend:
        ly = height - legend_h + 8
        body += _shift(legend, ly)
    return _svg(width, height, body, title)


def _shift(elements: list[str], dy: float) -> list[str]:
    return [f'<g transform="translate(0 {dy:.1f})">{"".join(elements)}</g>']


def line_chart(lines: Sequence[Line], *, title: str = "", x_label: str = "", y_label: str = "",
               y_range: tuple[float, float] | None = None,
               x_range: tuple[float, float] | None = None, step: bool = False,
               percent: bool = False, width: int = 760, height: int = 300) -> str:
    """Lines (or steps, for survival curves) with axes, grid and a legend."""
    xs = [x for ln in lines for x in ln.xs if ok(x)] or [0.0, 1.0]
    ys = [y for ln in lines for y in ln.ys if ok(y)]
    lo, hi, ticks = _range(ys, y_range)
    x_lo, x_hi = x_range or (min(xs), max(xs))
    if x_hi <= x_lo:
        x_hi = x_lo + 1
    names = [(ln.name, ln.color or PALETTE[i % len(PALETTE)]) for i, ln in enumerate(lines)]
    left, right, top = 62, width - 16, 30 if title else 12
    legend, legend_h = _legend(names, left, 0, right - left)
    bottom = height - 46 - legend_h

    def sx(v: float) -> float:
        return left + (v - x_lo) / (x_hi - x_lo) * (right - left)

    def sy(v: float) -> float:
        return bottom - (v - lo) / (hi - lo) * (bottom - top)

    body: list[str] = []
    if title:
        body.append(_title(left, title, right - left))
    _y_axis(body, ticks, sy, left, right, y_label, top, bottom, percent)
    body.append(f'<line x1="{left:.1f}" x2="{right:.1f}" y1="{bottom:.1f}" y2="{bottom:.1f}" '
                f'stroke="{AXIS}"/>')
    for t in nice_ticks(x_lo, x_hi, 8):
        if x_lo - 1e-9 <= t <= x_hi + 1e-9:
            x = sx(t)
            body.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{bottom:.1f}" y2="{bottom + 4:.1f}"'
                        f' stroke="{AXIS}"/>')
            body.append(_text(x, bottom + 16, fmt_num(t), size=11, fill=AXIS))
    if x_label:
        body.append(_text((left + right) / 2, bottom + 30, x_label, size=11, fill=AXIS))
    for i, ln in enumerate(lines):
        pts = [(sx(x), sy(y)) for x, y in zip(ln.xs, ln.ys, strict=False) if ok(x) and ok(y)]
        if not pts:
            continue
        d = f"M{pts[0][0]:.1f} {pts[0][1]:.1f}"
        for x1, y1 in pts[1:]:
            d += f"H{x1:.1f}V{y1:.1f}" if step else f"L{x1:.1f} {y1:.1f}"
        dash = ' stroke-dasharray="6 4"' if ln.dashed else ""
        color = names[i][1]
        body.append(f'<path d="{d}" fill="none" stroke="{color}" stroke-width="2"{dash}>'
                    f"<title>{escape(ln.name)}</title></path>")
    body += _shift(legend, height - legend_h + 8)
    return _svg(width, height, body, title)


def interval_chart(labels: Sequence[str], values: Sequence[float | None],
                   lows: Sequence[float | None], highs: Sequence[float | None], *,
                   colors: Sequence[str] | None = None, title: str = "", x_label: str = "",
                   refs: Sequence[tuple[float, str]] = (),
                   x_range: tuple[float, float] | None = None, percent: bool = False,
                   width: int = 380) -> str:
    """One row per label: a dot with its CI as a horizontal whisker; dashed reference lines."""
    row = 22
    top = 28 if title else 8
    label_w = min(0.4 * width, 12 + 6.2 * max((len(s) for s in labels), default=4))
    fit = max(4, int((label_w - 12) / 6.2))
    height = int(top + row * max(len(labels), 1) + 34)
    left, right, bottom = label_w, width - 14, top + row * max(len(labels), 1)
    allv = [v for seq in (values, lows, highs) for v in seq if ok(v)] + [r for r, _ in refs]
    lo, hi, ticks = _range(allv, x_range, zero=True)

    def sx(v: float) -> float:
        return left + (min(max(v, lo), hi) - lo) / (hi - lo) * (right - left)

    body: list[str] = []
    if title:
        body.append(_text(4, 17, title, anchor="start", size=12, weight="600"))
    for t in ticks:
        x = sx(t)
        body.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top:.1f}" y2="{bottom:.1f}" '
                    f'stroke="{GRID}"/>')
        body.append(_text(x, bottom + 14, f"{fmt_num(100 * t)}%" if percent else fmt_num(t),
                          size=10, fill=AXIS))
    body.append(f'<line x1="{left:.1f}" x2="{right:.1f}" y1="{bottom:.1f}" y2="{bottom:.1f}" '
                f'stroke="{AXIS}"/>')
    if x_label:
        body.append(_text((left + right) / 2, bottom + 28, x_label, size=10, fill=AXIS))
    for value, label in refs:
        x = sx(value)
        body.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top - 4:.1f}" y2="{bottom:.1f}" '
                    f'stroke="{REF}" stroke-width="1.2" stroke-dasharray="4 3">'
                    f"<title>{escape(label)}</title></line>")
        body.append(_text(x + 3, top - 6 if title else top + 6, label, anchor="start", size=9,
                          fill=REF))
    for i, name in enumerate(labels):
        y = top + row * i + row / 2
        short = name if len(name) <= fit else name[: fit - 1] + "…"
        body.append(_text(left - 8, y + 4, short, anchor="end", size=11, tip=name))
        v = values[i]
        if not ok(v):
            body.append(_text(left + 6, y + 4, "— not run", anchor="start", size=10, fill="#888"))
            continue
        color = (colors[i] if colors else None) or PALETTE[i % len(PALETTE)]
        if ok(lows[i]) and ok(highs[i]):
            body.append(f'<line x1="{sx(lows[i]):.1f}" x2="{sx(highs[i]):.1f}" y1="{y:.1f}" '
                        f'y2="{y:.1f}" stroke="{color}" stroke-width="2.5"/>')
        tip = f"{name}: {fmt_num(100 * v) + '%' if percent else fmt_num(v)}"
        body.append(f'<circle cx="{sx(v):.1f}" cy="{y:.1f}" r="4.5" fill="{color}">'
                    f"<title>{escape(tip)}</title></circle>")
    return _svg(width, height, body, title)
