"""tomo.cli.rows: a rich table for a few rows, plain aligned text for many; text is data either way."""

from __future__ import annotations

import io
import itertools

import pytest
from rich.console import Console

from tomo.cli import plain_stdout
from tomo.cli.rows import LONG, Cell, print_rows, say

HEADERS = ["location", "confidence", "code"]


def rows(n: int) -> list[list[Cell]]:
    out: list[list[Cell]] = [["a.py:1:0", ("confirmed", "green"), "x = '[red]x[/red]'"],
                             ["b.py:22:4", ("ambiguous", "yellow"), "esc \x1b[31m"]]
    return out + [[f"c.py:{i}:0", ("confirmed", "green"), f"f({i})"] for i in range(n - 2)]


def printed(n: int, **console: object) -> str:
    buf = io.StringIO()
    print_rows(HEADERS, rows(n), no_wrap=("location",), console=Console(file=buf, width=200, **console))  # type: ignore[arg-type]
    return buf.getvalue()


def test_short_and_long_tables_print_cells_as_text() -> None:
    for n in (3, LONG + 1):
        out = printed(n)
        assert "x = '[red]x[/red]'" in out and "esc \\x1b[31m" in out, out
        assert "\x1b" not in out  # no terminal: neither rich nor the plain renderer adds escapes
        assert sum(ln.strip().startswith(("a.py", "b.py", "c.py")) for ln in out.splitlines()) == n


def test_a_short_table_on_a_terminal_is_a_rich_table_and_in_a_pipe_plain_with_every_column() -> None:
    wide = [["a.py:1:0", ("confirmed", "green"), "x" * 120]]
    for terminal in (True, False):
        buf = io.StringIO()
        print_rows(HEADERS, wide, console=Console(file=buf, width=80, force_terminal=terminal, color_system=None))
        out = buf.getvalue()
        if terminal:  # rich fits the table to the terminal's 80 columns
            assert all(len(ln) <= 80 for ln in out.splitlines()), out
        else:  # a pipe (an agent's shell) gets every column whole, whatever the width
            assert out.splitlines()[1] == "a.py:1:0  confirmed   " + "x" * 120


def test_a_long_table_is_plain_aligned_text() -> None:
    out = printed(LONG + 1)
    lines = out.splitlines()
    assert lines[0].split() == HEADERS
    assert lines[1] == "a.py:1:0   confirmed   x = '[red]x[/red]'"  # padded to the widest cell, two spaces apart
    assert lines[2] == "b.py:22:4  ambiguous   esc \\x1b[31m"
    assert {ln.index("f(") for ln in lines[3:]} == {lines[0].index("code")}


def test_a_long_table_on_a_colour_terminal_keeps_the_styles_not_the_datas_escapes() -> None:
    out = printed(LONG + 1, force_terminal=True, color_system="standard")
    row = out.splitlines()[1]
    assert row == "a.py:1:0   \x1b[32mconfirmed\x1b[0m   x = '[red]x[/red]'"
    assert "esc \\x1b[31m" in out  # the data's ESC is shown, while the style's is sent
    assert printed(LONG + 1, force_terminal=True, color_system="standard", no_color=True).count("\x1b") == 0


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(("tty_compatible", "force_color", "tty"),
                         list(itertools.product([None, "0", "1", "yes"], [None, "", "1"], [True, False])))
def test_plain_stdout_judges_a_terminal_as_rich_does(monkeypatch: pytest.MonkeyPatch, tty_compatible: str | None,
                                                     force_color: str | None, tty: bool) -> None:
    """The no-rich fast path is taken exactly when rich itself would print to stdout as to a pipe."""
    for name, value in (("TTY_COMPATIBLE", tty_compatible), ("FORCE_COLOR", force_color)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    for name in ("JUPYTER_COLUMNS", "JUPYTER_LINES", "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)
    stream = _Stream(tty)
    monkeypatch.setattr("sys.stdout", stream)
    assert plain_stdout() == (not Console(file=stream).is_terminal)


def test_rows_and_lines_to_a_piped_stdout_are_plain_text(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TTY_COMPATIBLE", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    stream = _Stream(False)
    monkeypatch.setattr("sys.stdout", stream)
    print_rows(HEADERS, rows(3))
    say("3 references: [bold]2[/] confirmed \x1b[2J")
    lines = stream.getvalue().splitlines()
    assert lines[0].split() == HEADERS and lines[1] == "a.py:1:0   confirmed   x = '[red]x[/red]'"
    assert lines[-1] == "3 references: [bold]2[/] confirmed \\x1b[2J"  # never markup, control characters shown
