"""A Results table as text cells, formatted exactly as the terminal renderer formats them
(`render_results`), and as an HTML table."""

from __future__ import annotations

from html import escape

from mindprobe.core.numbers import display, legend
from mindprobe.core.results import Table

NUM = ' class="num"'
_BREAKS = ("_", "/", "-", ".")


def head_text(text: str) -> str:
    """`text` escaped, with a line-break opportunity after each `_`, `/`, `-` and `.`: a narrow
    column head then breaks between the words of a snake_case name, never inside one."""
    out = escape(text)
    for ch in _BREAKS:
        out = out.replace(ch, ch + "<wbr>")
    return out


def table_cells(t: Table) -> tuple[list[str], list[list[str]], list[bool]]:
    """(header, rows of cells, numeric column?) the way `render_results` shows the table."""
    return display(t)


def table_html(t: Table, key: str) -> str:
    """A captioned HTML table; `key` (run/table name) goes to data-table for tests and links."""
    header, rows, numeric = table_cells(t)
    th = "".join(f'<th{NUM if n else ""}>{head_text(h)}</th>'
                 for h, n in zip(header, numeric, strict=True))
    body = "".join(
        "<tr>" + "".join(f'<td{NUM if n else ""}>{escape(c)}</td>'
                         for c, n in zip(row, numeric, strict=True)) + "</tr>"
        for row in rows)
    if not rows:
        body = f'<tr><td colspan="{max(len(header), 1)}" class="muted">(empty)</td></tr>'
    return (f'<div class="tablewrap"><table class="data" data-table="{escape(key)}">'
            f"<caption>{escape(t.title + (f' ({legend(t)})' if legend(t) else ''))}</caption><thead><tr>{th}</tr></thead>"
            f"<tbody>{body}</tbody></table></div>")
