"""A fix as corrected lines: the definitions shown with their file's line numbers, the model's reply read as
``NUMBER: new line``, and the edit laid in by the harness as each whole corrected definition.

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
from difflib import SequenceMatcher
from pathlib import Path

from tomo.oi.suspects import Definition

_NUMBERED = re.compile(r"^\s*(?:line\s*)?(\d{1,6})\s*[:|]\s?(.*)$", re.IGNORECASE)
_FENCED = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
ALIKE = 0.8
"""How alike (difflib's ratio) a line the model wrote must be to a shown line to be read as that line corrected."""


def spans_of(definitions: Sequence[Definition], constants: Sequence[tuple[int, int]] = ()) -> list[tuple[int, int]]:
    """The (first, last) lines to show of one file: its ``definitions`` and the module ``constants`` they use, in the
    file's order, a part inside another one left out."""
    parts = sorted({(d.start, d.end) for d in definitions} | set(constants))
    return [p for p in parts if not any(o != p and o[0] <= p[0] and p[1] <= o[1] for o in parts)]


def numbered_view(root: Path, path: str, spans: Sequence[tuple[int, int]]) -> tuple[str, set[int]]:
    """The ``spans`` of ``path`` (:func:`spans_of`), each line after its number in the file; and the numbers a reply
    may change."""
    lines = (root / path).read_text(encoding="utf-8", errors="replace").splitlines()
    shown = [n for start, end in spans for n in range(start, min(end, len(lines)) + 1)]
    width = len(str(shown[-1]))
    view = "\n".join(f"{n:>{width}}: {lines[n - 1]}" for n in shown)
    return view, {n for n in shown if lines[n - 1].strip()}


def numbered_lines(reply: str, allowed: set[int]) -> dict[int, str]:
    """The lines a reply corrects (``33: if x >= y:``), only numbers in ``allowed``, read from its last fenced block
    that has any (else from the whole reply); the first word for a number wins there.

    Why the last block: asked to say what is wrong first, Qwen 1.5B quotes the wrong line (``20: `return ... // 9`
    is incorrect``, or in a block of its own) before the block with the corrected one, and the quote is no fix."""
    blocks = [b for b in _FENCED.findall(reply) if _read(b, allowed)]
    return _read(blocks[-1] if blocks else reply, allowed)


def _read(text: str, allowed: set[int]) -> dict[int, str]:
    found: dict[int, str] = {}
    for line in text.splitlines():
        match = _NUMBERED.match(line)
        # `20: ```python` opens a block after a number: the fence's label is no line of code (s44 wrote `python`
        # into parse_duration's line 20 from such a reply)
        new = _unquoted(match[2]) if match and not match[2].lstrip().startswith("```") else ""
        if match and int(match[1]) in allowed and int(match[1]) not in found and new:
            found[int(match[1])] = new
    return found


def restated_lines(reply: str, lines: Sequence[str], allowed: set[int]) -> dict[int, str]:
    """Corrected lines a reply gives without a number: each line of code it writes (in a block, or in backticks in
    its prose) that differs from every shown line but is alike (``ALIKE``) to one, as that line corrected; the last
    word for a line wins.

    Why: Qwen 1.5B, asked for numbered lines, wrote its fix in prose only ("It should be `return (value - 32) * 5 /
    9`"), the line quoted before it."""
    shown = _shown(lines, allowed)
    written = [m.group(1) for m in _SPAN.finditer(reply)]
    for block in _FENCED.findall(reply):
        written += [_NUMBERED.sub(r"\2", line) for line in block.splitlines()]
    found: dict[int, str] = {}
    for text in map(_unquoted, written):
        number = _alike(text, shown) if text and text not in shown.values() else None
        if number is not None:
            found[number] = text
    return found


def anchored(changes: dict[int, str], lines: Sequence[str], allowed: set[int]) -> dict[int, str]:
    """``changes`` with each line that is nothing like the line of its number, but alike to one other shown line,
    moved there. Why: Qwen 1.5B, shown `convert` and `to_celsius`, wrote the fix of `to_celsius` (`return (value -
    32) * 5 / 9`) under the number of `convert`'s first line: the text is its proposal, the number a slip."""
    shown = _shown(lines, allowed)
    moved: dict[int, str] = {}
    for number, text in changes.items():
        here = SequenceMatcher(None, text, shown.get(number, "")).ratio()
        there = _alike(text, shown) if here < ALIKE else None
        moved[there if there is not None and there not in changes else number] = text
    return moved


def _unquoted(text: str) -> str:
    """``text`` without the backticks a model puts around a line of code (`` `x = 1` ``)."""
    return text.strip().strip("`").strip()


def _shown(lines: Sequence[str], allowed: set[int]) -> dict[int, str]:
    return {n: lines[n - 1].strip() for n in sorted(allowed) if 0 < n <= len(lines)}


def _alike(text: str, shown: dict[int, str]) -> int | None:
    """The one shown line ``text`` is alike to (``ALIKE``, and clearly more than to any other), if any."""
    scores = sorted(((SequenceMatcher(None, text, line).ratio(), n) for n, line in shown.items()), reverse=True)
    if not scores:
        return None
    (score, number), runner_up = scores[0], scores[1][0] if len(scores) > 1 else 0.0
    return number if score >= ALIKE and score - runner_up >= 0.05 else None


def reply_fix(reply: str, root: Path, path: str, spans: Sequence[tuple[int, int]],
              allowed: set[int]) -> tuple[dict[int, str], list[str]]:
    """The lines a reply corrects in ``path`` and the edit blocks' code for them (:func:`corrected`): its numbered
    lines, each moved to the shown line its text is alike to when its number points at a line nothing like it
    (:func:`anchored`); when those change nothing, the lines of code it restates in prose (:func:`restated_lines`).
    ({}, []) when it gives neither; (lines, []) when they change nothing or would not parse."""
    lines = (root / path).read_text(encoding="utf-8", errors="replace").splitlines()
    changes = anchored(numbered_lines(reply, allowed), lines, allowed)
    blocks = corrected(root, path, changes, spans) if changes else []
    restated = {} if blocks else restated_lines(reply, lines, allowed)
    return (restated, corrected(root, path, restated, spans)) if restated else (changes, blocks)


def corrected(root: Path, path: str, changes: dict[int, str], spans: Sequence[tuple[int, int]]) -> list[str]:
    """The edit blocks' code for ``changes`` to ``path`` (each line keeps the file's indentation): each shown part
    (``spans``: a definition, or a module constant laid in whole) with a changed line, in the file's order. [] when
    nothing differs or a changed part would not parse."""
    lines = (root / path).read_text(encoding="utf-8", errors="replace").splitlines()
    new = list(lines)
    for number, text in changes.items():
        old = lines[number - 1]
        new[number - 1] = old[:len(old) - len(old.lstrip())] + text
    blocks = ["\n".join(new[start - 1:end]) for start, end in spans if new[start - 1:end] != lines[start - 1:end]]
    try:
        for block in blocks:
            ast.parse(textwrap.dedent(block))
    except SyntaxError:
        return []
    return blocks
