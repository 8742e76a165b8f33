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

from mindprobe.report.svgtext import (
    FONT_FAMILY,
    PALETTE,
    REF,
    _legend,
    _text,
    distinct_colors,
    fit,
    marker,
    marker_for,
    text_width,
    wrap,
)

AXIS = "#444"
GRID = "#e3e3e3"


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


def _title(x: float, title: str, room: float) -> tuple[list[str], float]:
    """The chart's title, wrapped to its width (at most three lines, the whole of it as a
    tooltip when cut); returns the elements and the y where the plot may start."""
    lines = wrap(title, room, 13, bold=True)
    tip = title if " ".join(lines) != " ".join(title.split()) else ""
    out = [_text(x, 17 + 16 * i, line, anchor="start", size=13, weight="600", tip=tip)
           for i, line in enumerate(lines)]
    return out, 16 * len(lines) + 12


def _svg(width: int, height: int, body: list[str], title: str, label: str = "") -> str:
    aria = escape(label or title)
    head = (f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" '
            f'height="{height}" role="img" aria-label="{aria}" font-family="{FONT_FAMILY}">')
    return head + "".join(body) + "</svg>"


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
        body.append(_text(14, mid, fit(y_label, bottom - top, 11), size=11, fill=AXIS,
                          rotate=-90, tip=y_label))


def _category_labels(categories: Sequence[str], group: float) -> tuple[bool, list[str], float]:
    """(rotated?, labels, height they need): upright when every label fits its group's width,
    else slanted at 35°, each cut to 150 px."""
    if all(text_width(c, 11) <= group - 4 for c in categories):
        return False, list(categories), 22.0
    labels = [fit(c, 150, 11) for c in categories]
    longest = max((text_width(c, 11) for c in labels), default=0)
    return True, labels, 16 + longest * math.sin(math.radians(35))


def bar_chart(categories: Sequence[str], series: Sequence[Series], *, title: str = "",
              y_label: str = "", x_label: str = "", y_range: tuple[float, float] | None = None,
              refs: Sequence[tuple[float, str]] = (),
              category_refs: Sequence[float | None] | None = None,
              category_ref_label: str = "chance", percent: bool = False,
              width: int = 760, height: int = 320) -> str:
    """Grouped vertical bars (one group per category, one bar per series, each series its own
    colour and marker) with CI whiskers.

    `refs` are horizontal reference lines across the plot (e.g. chance), named in the legend;
    `category_refs` a short dashed mark per category (e.g. a chance level that depends on the
    category).
    """
    n_cat, n_ser = len(categories), max(len(series), 1)
    allv: list[float] = []
    for s in series:
        for seq in (s.values, s.lows or (), s.highs or ()):
            allv += [v for v in seq if ok(v)]
    allv += [r for r, _ in refs] + [r for r in (category_refs or ()) if ok(r)]
    lo, hi, ticks = _range(allv, y_range)
    colors = distinct_colors([s.color for s in series])
    shapes: list[str | None] = [marker_for(i) for i in range(len(series))]
    legend_names = [(s.name, colors[i]) for i, s in enumerate(series)]
    for value, label in refs:
        legend_names.append((f"{label} ({fmt_num(100 * value) + '%' if percent else fmt_num(value)})",
                             REF))
        shapes.append("dash")
    if category_refs and any(ok(r) for r in category_refs):
        legend_names.append((category_ref_label, REF))
        shapes.append("dash")
    left, right = 62, width - 14
    title_el, top = _title(left, title, right - left) if title else ([], 12)
    group = (right - left) / max(n_cat, 1)
    rotate, cat_labels, label_room = _category_labels(categories, group)
    legend, legend_h = _legend(legend_names, left, 0, right - left, shapes)
    height = max(height, int(top + 140 + label_room + legend_h))
    bottom = height - label_room - (16 if x_label else 0) - legend_h - 6

    def scale(v: float) -> float:
        return bottom - (v - lo) / (hi - lo) * (bottom - top)

    body: list[str] = list(title_el)
    _y_axis(body, ticks, scale, left, right, y_label, top, bottom, percent)
    bar = min(42.0, group * 0.8 / n_ser)
    base = scale(min(max(0.0, lo), hi))
    for ci, cat in enumerate(categories):
        gx = left + ci * group + (group - bar * n_ser) / 2
        for si, s in enumerate(series):
            color = colors[si]
            v = s.values[ci] if ci < len(s.values) else None
            x = gx + si * bar
            if not ok(v):
                body.append(_text(x + bar / 2, base - 4, "n/a", size=9, fill="#888")
                            if bar >= 16 else "")
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
            if n_ser > 1 and bar >= 7:
                body.append(marker(shapes[si] or "circle", x + bar / 2, y, color,
                                   min(4.0, bar / 3), tip=tip))
        if category_refs and ci < len(category_refs) and ok(category_refs[ci]):
            y = scale(category_refs[ci])
            body.append(f'<line x1="{left + ci * group + 3:.1f}" x2="{left + (ci + 1) * group - 3:.1f}"'
                        f' y1="{y:.1f}" y2="{y:.1f}" stroke="{REF}" stroke-width="1.5" '
                        f'stroke-dasharray="5 3"><title>{escape(category_ref_label)} '
                        f'{escape(fmt_num(category_refs[ci]))}</title></line>')
        cx = left + (ci + 0.5) * group
        tip = cat if cat_labels[ci] != cat else ""
        if rotate:
            body.append(_text(cx + 4, bottom + 12, cat_labels[ci], anchor="end", size=11,
                              rotate=-35, tip=tip))
        else:
            body.append(_text(cx, bottom + 16, cat_labels[ci], size=11))
    for value, label in refs:
        y = scale(value)
        body.append(f'<line x1="{left:.1f}" x2="{right:.1f}" y1="{y:.1f}" y2="{y:.1f}" '
                    f'stroke="{REF}" stroke-width="1.2" stroke-dasharray="6 4">'
                    f"<title>{escape(label)}</title></line>")
    if lo < 0 < hi:
        body.append(f'<line x1="{left:.1f}" x2="{right:.1f}" y1="{base:.1f}" y2="{base:.1f}" '
                    f'stroke="{AXIS}"/>')
    else:
        body.append(f'<line x1="{left:.1f}" x2="{right:.1f}" y1="{bottom:.1f}" '
                    f'y2="{bottom:.1f}" stroke="{AXIS}"/>')
    if x_label:
        body.append(_text((left + right) / 2, bottom + label_room + 12,
                          fit(x_label, right - left, 11), size=11, fill=AXIS, tip=x_label))
    if legend:
        body += _shift(legend, height - legend_h + 8)
    return _svg(width, height, body, title)


def _shift(elements: list[str], dy: float) -> list[str]:
    return [f'<g transform="translate(0 {dy:.1f})">{"".join(elements)}</g>']


def line_chart(lines: Sequence[Line], *, title: str = "", x_label: str = "", y_label: str = "",
               y_range: tuple[float, float] | None = None,
               x_range: tuple[float, float] | None = None, step: bool = False,
               percent: bool = False, width: int = 760, height: int = 300) -> str:
    """Lines (or steps, for survival curves) with axes, grid and a legend; each line its own
    colour and dash pattern."""
    xs = [x for ln in lines for x in ln.xs if ok(x)] or [0.0, 1.0]
    ys = [y for ln in lines for y in ln.ys if ok(y)]
    lo, hi, ticks = _range(ys, y_range)
    x_lo, x_hi = x_range or (min(xs), max(xs))
    if x_hi <= x_lo:
        x_hi = x_lo + 1
    colors = distinct_colors([ln.color for ln in lines])
    names = [(ln.name, colors[i]) for i, ln in enumerate(lines)]
    left, right = 62, width - 16
    title_el, top = _title(left, title, right - left) if title else ([], 12)
    legend, legend_h = _legend(names, left, 0, right - left,
                               [marker_for(i) for i in range(len(lines))])
    height = max(height, int(top + 150 + legend_h))
    bottom = height - 46 - legend_h

    def sx(v: float) -> float:
        return left + (v - x_lo) / (x_hi - x_lo) * (right - left)

    def sy(v: float) -> float:
        return bottom - (v - lo) / (hi - lo) * (bottom - top)

    body: list[str] = list(title_el)
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
        body.append(_text((left + right) / 2, bottom + 30, fit(x_label, right - left, 11),
                          size=11, fill=AXIS))
    dashes = ("", "6 3", "2 3", "8 3 2 3")
    for i, ln in enumerate(lines):
        pts = [(sx(x), sy(y)) for x, y in zip(ln.xs, ln.ys, strict=False) if ok(x) and ok(y)]
        if not pts:
            continue
        d = f"M{pts[0][0]:.1f} {pts[0][1]:.1f}"
        for x1, y1 in pts[1:]:
            d += f"H{x1:.1f}V{y1:.1f}" if step else f"L{x1:.1f} {y1:.1f}"
        pattern = "6 4" if ln.dashed else dashes[(i // len(PALETTE)) % len(dashes)]
        dash = f' stroke-dasharray="{pattern}"' if pattern else ""
        color = names[i][1]
        body.append(f'<path d="{d}" fill="none" stroke="{color}" stroke-width="2"{dash}>'
                    f"<title>{escape(ln.name)}</title></path>")
        x_end, y_end = pts[-1]
        body.append(marker(marker_for(i), x_end, y_end, color, 4.5, tip=ln.name))
    body += _shift(legend, height - legend_h + 8)
    return _svg(width, height, body, title)


def interval_chart(labels: Sequence[str], values: Sequence[float | None],
                   lows: Sequence[float | None], highs: Sequence[float | None], *,
                   colors: Sequence[str] | None = None, markers: Sequence[str] | None = None,
                   hollow: Sequence[bool] | None = None, title: str = "",
                   x_label: str = "", refs: Sequence[tuple[float, str]] = (),
                   x_range: tuple[float, float] | None = None, percent: bool = False,
                   width: int = 460) -> str:
    """One row per label: a marker (its own colour and shape; hollow for published numbers)
    with its CI as a horizontal whisker; dashed reference lines named in a legend below."""
    row = 22
    label_w = min(0.45 * width, 14 + max((text_width(s, 11) for s in labels), default=30))
    left, right = label_w, width - 16
    title_el, top = _title(4, title, width - 8) if title else ([], 8)
    bottom = top + row * max(len(labels), 1)
    ref_names = [(f"{label} {fmt_num(100 * v) + '%' if percent else fmt_num(v)}", REF)
                 for v, label in refs]
    legend, legend_h = _legend(ref_names, left, 0, right - left, ["dash"] * len(refs))
    height = int(bottom + 20 + (14 if x_label else 0) + (legend_h + 4 if refs else 4))
    allv = [v for seq in (values, lows, highs) for v in seq if ok(v)] + [r for r, _ in refs]
    lo, hi, ticks = _range(allv, x_range, zero=True)

    def sx(v: float) -> float:
        return left + (min(max(v, lo), hi) - lo) / (hi - lo) * (right - left)

    body: list[str] = list(title_el)
    taken = 0.0  # right edge of the last tick label drawn: a label that would touch it waits
    for t in ticks:
        x = sx(t)
        body.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top:.1f}" y2="{bottom:.1f}" '
                    f'stroke="{GRID}"/>')
        text = f"{fmt_num(100 * t)}%" if percent else fmt_num(t)
        w = text_width(text, 10)
        x0 = min(max(x - w / 2, 0.0), width - w)
        if x0 >= taken + 4:
            body.append(_text(x0, bottom + 13, text, size=10, fill=AXIS, anchor="start"))
            taken = x0 + w
    body.append(f'<line x1="{left:.1f}" x2="{right:.1f}" y1="{bottom:.1f}" y2="{bottom:.1f}" '
                f'stroke="{AXIS}"/>')
    if x_label:
        body.append(_text((left + right) / 2, bottom + 27, fit(x_label, right - left, 10),
                          size=10, fill=AXIS))
    for value, label in refs:
        x = sx(value)
        body.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top:.1f}" y2="{bottom:.1f}" '
                    f'stroke="{REF}" stroke-width="1.2" stroke-dasharray="4 3">'
                    f"<title>{escape(label)}</title></line>")
    cols = distinct_colors(list(colors) if colors else [None] * len(labels))
    for i, name in enumerate(labels):
        y = top + row * i + row / 2
        short = fit(name, label_w - 10, 11)
        body.append(_text(left - 8, y + 4, short, anchor="end", size=11,
                          tip=name if short != name else ""))
        v = values[i]
        if not ok(v):
            body.append(_text(left + 6, y + 4, "— not run", anchor="start", size=10, fill="#888"))
            continue
        color = cols[i]
        if ok(lows[i]) and ok(highs[i]):
            body.append(f'<line x1="{sx(lows[i]):.1f}" x2="{sx(highs[i]):.1f}" y1="{y:.1f}" '
                        f'y2="{y:.1f}" stroke="{color}" stroke-width="2.5"/>')
        tip = f"{name}: {fmt_num(100 * v) + '%' if percent else fmt_num(v)}"
        shape = markers[i] if markers else marker_for(i)
        body.append(marker(shape, sx(v), y, color, 5,
                           hollow=bool(hollow and hollow[i]), tip=tip))
    if refs:
        body += _shift(legend, height - legend_h + 6)
    return _svg(width, height, body, title)
