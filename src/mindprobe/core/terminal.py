"""The one way a table reaches the terminal: fitted to the console's width, never a word broken.

Every terminal table (a benchmark's analysis tables, the profile plan and profile, a dry run,
`list`, `models`, `runs`) is printed by `print_table`, which chooses each column's width itself
instead of leaving it to rich (which folds words once a table is too wide):

1. at its natural width, boxed, when that fits (a wider console is used as it is), else
   without vertical rules (two spaces between columns);
2. else with every row on one line and headers wrapped between words, boxed or not;
3. else each column at least as wide as its longest word (header or cell), the spare room
   given first to the columns it keeps from wrapping: cells and headers wrap between words;
4. else split into consecutive tables that each repeat the first column.

Only a single word wider than the whole console (a long path) is ever cut. The title is printed
on its own above the table, wrapped between words at the console's width.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

Cell = str | Text


@dataclass(frozen=True)
class Layout:
    """How a table is drawn: its columns' widths, boxed or compact, and the column groups."""

    widths: list[int]
    compact: bool
    groups: list[list[int]]


def _plain(cell: Cell) -> str:
    return cell.plain if isinstance(cell, Text) else str(cell)


def _longest_word(text: str) -> int:
    return max((cell_len(w) for w in text.split()), default=0)


def _longest_line(text: str) -> int:
    return max((cell_len(line) for line in text.splitlines()), default=0)


def overhead(n_columns: int, compact: bool) -> int:
    """Characters a table of `n_columns` spends besides its cells: boxed `│ a │ b │`, compact
    `a  b` (see `_rich_table`)."""
    return 2 * (n_columns - 1) if compact else 3 * n_columns + 1


def layout(headers: Sequence[str], rows: Sequence[Sequence[Cell]], width: int) -> Layout:
    """The widths and grouping that fit `width` (steps 1-4 of the module docstring)."""
    texts = [[h, *(_plain(r[i]) for r in rows)] for i, h in enumerate(headers)]
    shortest = [max(1, max(_longest_word(t) for t in col)) for col in texts]
    natural = [max(1, max(_longest_line(t) for t in col)) for col in texts]
    cells = _cells(texts, shortest)
    every = list(range(len(headers)))
    for need in (natural, cells, shortest):  # whole lines, then rows on one line, then words
        for compact in (False, True):
            room = width - overhead(len(headers), compact)
            if sum(need) <= room:
                return Layout(_share(shortest, natural, room, cells), compact, [every])
    return Layout(*_split(shortest, natural, width))


def _cells(texts: list[list[str]], shortest: list[int]) -> list[int]:
    """Each column's width with its cells on one line each (the header may wrap)."""
    return [max(low, max((_longest_line(t) for t in col[1:]), default=0))
            for col, low in zip(texts, shortest, strict=True)]


def _share(shortest: list[int], natural: list[int], room: int,
           cells: list[int] | None = None) -> list[int]:
    """Widths from each column's longest word up: first every cell on one line (headers may
    wrap), then whole headers, each time the columns that need least first; what is left
    goes to the rest in proportion to what they lack."""
    widths = list(shortest)
    spare = room - sum(widths)
    for goal in ([cells] if cells else []) + [natural]:
        for i in sorted(range(len(widths)), key=lambda i: goal[i] - widths[i]):
            need = goal[i] - widths[i]
            if 0 < need <= spare:
                widths[i], spare = goal[i], spare - need
    lacking = [i for i in range(len(widths)) if widths[i] < natural[i]]
    total = sum(natural[i] - widths[i] for i in lacking)
    for i in lacking:
        give = spare * (natural[i] - widths[i]) // total if total else 0
        widths[i] += give
    return widths


def _split(shortest: list[int], natural: list[int], width: int
           ) -> tuple[list[int], bool, list[list[int]]]:
    """Compact tables of consecutive columns, each led by the first column (at its longest
    word), each fitting; a column wider than the console on its own is cut (nothing else can
    be done with a word that long)."""
    groups: list[list[int]] = []
    current: list[int] = [0]
    for i in range(1, len(shortest)):
        trial = [*current, i]
        if len(current) > 1 and sum(shortest[j] for j in trial) > width - overhead(
                len(trial), True):
            groups.append(current)
            current = [0, i]
        else:
            current = trial
    groups.append(current)
    widths = list(shortest)
    for group in groups:
        rest = group[1:] or group
        room = width - overhead(len(group), True) - (shortest[0] if group[1:] else 0)
        if sum(shortest[j] for j in rest) <= room:
            fitted = _share([shortest[j] for j in rest], [natural[j] for j in rest], room)
        else:
            fitted = [max(1, room // len(rest))] * len(rest)
        for j, w in zip(rest, fitted, strict=True):
            widths[j] = w
    return widths, True, groups


def _rich_table(compact: bool) -> Table:
    if compact:
        return Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                     collapse_padding=True)
    return Table()


def print_table(console: Console, title: str | None, headers: Sequence[str],
                rows: Sequence[Sequence[Cell]], right: Sequence[bool] | None = None,
                legend: str | None = None) -> None:
    """Print one table fitted to `console.width` (cells: plain text, or rich `Text` for style);
    `right`: which columns are right-aligned (numbers); `legend`: a line under it."""
    right = list(right) if right is not None else [False] * len(headers)
    fit = layout(headers, rows, console.width)
    if title:
        console.print(Text(title, style="table.title"), overflow="fold")
    for k, group in enumerate(fit.groups):
        if k:
            console.print(Text(f"(continued: {', '.join(headers[j] for j in group[1:])})",
                               style="table.title"), overflow="fold")
        t = _rich_table(fit.compact)
        for j in group:
            t.add_column(headers[j], justify="right" if right[j] else "left",
                         width=fit.widths[j], overflow="fold")
        for row in rows:
            t.add_row(*(row[j] if isinstance(row[j], Text) else Text(str(row[j]))
                        for j in group))
        console.print(t)
    if legend:
        console.print(legend, markup=False, highlight=False, overflow="fold")


def print_lines(console: Console, lines: Sequence[str]) -> None:
    """Notes under a table: plain text wrapped between words at the console's width."""
    for line in lines:
        console.print(line, markup=False, highlight=False, overflow="fold")
