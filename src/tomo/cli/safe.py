"""Text from outside (source lines, file names, model text, tool results, command output) printed as text.

Two things go wrong when such text reaches rich and the terminal as it is. Rich reads ``[...]`` as markup: a source
line holding ``"[/foo]"`` ends the command in a MarkupError, ``items[i]`` loses its ``[i]``, ``[link=...]`` becomes a
link. And the terminal obeys control characters: an ESC sequence in a model's reply or a file name can recolour the
screen, move the cursor, hide what follows or retitle the window; a carriage return can overwrite what a line said.

Every renderer in ``tomo.cli`` passes such text through one of these before it prints it:

- :func:`text` makes a rich ``Text`` (never parsed as markup) with a style of tomo's choosing;
- :func:`esc` is for a value interpolated into one of tomo's own markup strings;
- :func:`visible` is for output that does not go through rich (``typer.echo``).

Control characters are shown, not obeyed and not dropped: each is written as its escape (ESC prints as the four
characters ``\\x1b``; a carriage return as ``\\r``), so a person sees that the text held one. Tab and newline are
kept. Bidirectional-override characters (the "Trojan Source" trick that shows code in another order than it runs) are
shown the same way (``\\u202e``). A file name that is not valid UTF-8 reaches Python with its bad bytes as lone
surrogates (``surrogateescape``); each is shown as the byte it stands for (``\\xff``) instead of failing to encode.
Backslashes are left as they are, so ``\\x1b`` typed in a source file and a real ESC look the same; ``--json`` tells
them apart.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.text import Text

_NAMED = {"\r": "\\r", "\b": "\\b", "\f": "\\f", "\v": "\\v", "\a": "\\a", "\0": "\\0"}

# C0 controls except tab and newline, DEL, C1 controls, bidi controls, and lone surrogates.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _shown(match: re.Match[str]) -> str:
    ch = match.group()
    code = ord(ch)
    if ch in _NAMED:
        return _NAMED[ch]
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8, smuggled in by surrogateescape
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(value: object) -> str:
    """``value`` as a string whose control characters are shown as escapes instead of acted on."""
    return _UNSAFE.sub(_shown, str(value))


def esc(value: object) -> str:
    """``value`` made safe to put inside tomo's own markup: its control characters shown, its brackets literal."""
    from rich.markup import escape  # (here, not on import: a query printed to a pipe needs no rich at all)

    return escape(visible(value))


def text(value: object, style: str = "") -> Text:
    """``value`` as a rich ``Text`` (no markup), its control characters shown."""
    from rich.text import Text

    return Text(visible(value), style=style)
