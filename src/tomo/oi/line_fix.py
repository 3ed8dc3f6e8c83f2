"""A fix as corrected lines: the definition shown with its file's line numbers, the model's reply read as
``NUMBER: new line``, and the edit laid in by the harness as the whole corrected definition.

Why: asked for "the complete corrected definition", Qwen 2.5-Coder 1.5B rewrote the loop of `add_business_days`
around an off-by-one (`>` for `>=`) in all six trials and never touched the one comparison that was wrong. A request
for the wrong line alone keeps the rest of the function as it is. Only the numbers shown can be changed, each line
keeps its indentation, and the result must parse: the reply is data, never a path or a range tomo trusts.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Sequence
from pathlib import Path

from tomo.oi.suspects import Definition

_NUMBERED = re.compile(r"^\s*(?:line\s*)?(\d{1,6})\s*[:|]\s?(.*)$", re.IGNORECASE)


def numbered_view(root: Path, definition: Definition, constants: Sequence[str] = ()) -> tuple[str, set[int]]:
    """The module constants the definition uses (their lines in ``constants``, as the file has them) and the
    definition itself, each line after its number in the file; and the numbers a reply may change."""
    lines = (root / definition.path).read_text(encoding="utf-8", errors="replace").splitlines()
    wanted = set(constants)
    shown = [n for n, line in enumerate(lines, 1) if n < definition.start and line in wanted]
    shown += list(range(definition.start, definition.end + 1))
    width = len(str(shown[-1]))
    view = "\n".join(f"{n:>{width}}: {lines[n - 1]}" for n in shown)
    return view, {n for n in shown if lines[n - 1].strip()}


def numbered_lines(reply: str, allowed: set[int]) -> dict[int, str]:
    """The lines a reply corrects (``33: if x >= y:``), only numbers in ``allowed``; the first word for a number
    wins (a model may repeat itself in prose after the block)."""
    found: dict[int, str] = {}
    for line in reply.splitlines():
        match = _NUMBERED.match(line)
        if match and int(match[1]) in allowed and int(match[1]) not in found and match[2].strip():
            found[int(match[1])] = match[2].strip()
    return found


def corrected(root: Path, definition: Definition, changes: dict[int, str]) -> list[str]:
    """The edit blocks' code for ``changes`` (each line keeps the file's indentation): the corrected definition,
    and each changed module constant on its own. [] when nothing differs or the definition would not parse."""
    lines = (root / definition.path).read_text(encoding="utf-8", errors="replace").splitlines()
    new = list(lines)
    for number, text in changes.items():
        old = lines[number - 1]
        new[number - 1] = old[:len(old) - len(old.lstrip())] + text
    if new == lines:
        return []
    body = "\n".join(new[definition.start - 1:definition.end])
    try:
        ast.parse(textwrap.dedent(body))
    except SyntaxError:
        return []
    blocks = [new[n - 1] for n in sorted(changes) if n < definition.start and new[n - 1] != lines[n - 1]]
    if any(new[n - 1] != lines[n - 1] for n in range(definition.start, definition.end + 1)):
        blocks.append(body)
    return blocks
