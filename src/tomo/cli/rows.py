"""Tables of query results: a rich table for a few rows on a terminal, plain aligned text otherwise.

rich lays a table out by measuring every cell against the terminal's width, then wraps and pads each one: about
0.4 ms a row, so Django's 383 references to ``cached_property`` took 150 ms to print (more than the query and the
start-up together) and ``QuerySet.filter``'s 2,831 over a second. In a pipe (an agent calling ``tomo graph``
through a shell) rich lays the table out at 80 columns and drops the code and reason columns. So past :data:`LONG`
rows, and whenever the output is not a terminal, the table is written as plain text: each column padded to its
widest cell, the last one not padded, nothing wrapped or cut (such output is read with a pager, grep or a model,
where every column counts). Either way a cell is text, never markup, and its control characters are shown
(:func:`tomo.cli.safe.visible`); on a colour terminal a styled cell keeps its colour in plain text too.

Output to a pipe imports no rich at all (:func:`tomo.cli.plain_stdout`): rich costs about 30 ms to import, a tenth of an
agent's `tomo graph refs` on a warm index, for a listing that is plain text anyway.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Collection, Sequence
from typing import IO, TYPE_CHECKING

from tomo.cli import plain_stdout
from tomo.cli.safe import text, visible

if TYPE_CHECKING:
    from rich.console import Console

LONG = 100  # rows; a rich table of 100 rows costs about 40 ms
Cell = str | tuple[str, str]  # a cell's text, or (text, style) with a style of tomo's choosing ("green", "dim")
_SGR = {"green": "32", "yellow": "33", "red": "31", "dim": "2", "bold": "1"}  # the styles plain text keeps


def rich_console(*, stderr: bool = False, highlight: bool = True) -> Console:
    """A rich console for stdout or stderr. On a terminal it lays text out to the window; to a pipe or a file each
    line stays whole (soft wrap), where rich would cut a long command, path or error at the 80th column."""
    from rich.console import Console

    console = Console(stderr=stderr, highlight=highlight)
    console.soft_wrap = not console.is_terminal
    return console


@functools.cache
def stdout_console() -> Console:
    """The rich console of stdout, made on first use: listings and :func:`say` never need it in a pipe."""
    return rich_console()


def say(line: str) -> None:
    """Print one line of tomo's own words (no markup; outside text in it is shown as text)."""
    if plain_stdout():
        sys.stdout.write(visible(line) + "\n")
    else:
        stdout_console().print(text(line))


def print_rows(headers: Sequence[str], rows: Sequence[Sequence[Cell]], no_wrap: Collection[str] = (),
               console: Console | None = None) -> None:
    """Print ``rows`` under ``headers`` on ``console`` (default: stdout); the columns named in ``no_wrap`` are never
    wrapped by the rich table."""
    if console is None:
        if plain_stdout():
            _plain(sys.stdout, headers, rows, colour=False)
            return
        console = stdout_console()
    if len(rows) <= LONG and console.is_terminal:
        _rich(console, headers, rows, no_wrap)
    else:
        _plain(console.file, headers, rows,
               colour=console.is_terminal and console.color_system is not None and not console.no_color)


def _rich(console: Console, headers: Sequence[str], rows: Sequence[Sequence[Cell]], no_wrap: Collection[str]) -> None:
    from rich.table import Table  # only here: a long listing never needs it

    table = Table(box=None)
    for h in headers:
        table.add_column(h, no_wrap=h in no_wrap)
    for row in rows:
        table.add_row(*(text(c) if isinstance(c, str) else text(*c) for c in row))
    console.print(table)


def _plain(out: IO[str], headers: Sequence[str], rows: Sequence[Sequence[Cell]], colour: bool) -> None:
    shown = [[visible(c if isinstance(c, str) else c[0]) for c in row] for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in shown)]) for i, h in enumerate(headers)]
    last = len(headers) - 1

    def line(cells: Sequence[str], styles: Sequence[str]) -> str:
        parts = []
        for i, (cell, style) in enumerate(zip(cells, styles, strict=True)):
            pad = "" if i == last else " " * (widths[i] - len(cell))
            sgr = _SGR.get(style) if colour else None
            parts.append(f"\x1b[{sgr}m{cell}\x1b[0m{pad}" if sgr and cell else cell + pad)
        return "  ".join(parts).rstrip()

    lines = [line(list(headers), ["bold"] * len(headers))]
    lines += [line(cells, ["" if isinstance(c, str) else c[1] for c in row]) for cells, row in zip(shown, rows,
                                                                                                  strict=True)]
    out.write("\n".join(lines) + "\n")
    out.flush()
