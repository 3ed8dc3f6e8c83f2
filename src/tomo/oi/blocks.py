"""Finding the code a model wants run: fenced Python and shell blocks, in the order it wrote them.

The fence rules are CommonMark's, because that is what models were trained on: a fence is three or more backticks
or tildes (indented at most three spaces); it closes only on a line of the same character, at least as long, with
nothing after it. So a ```` block may hold ``` lines, and a ``` block may hold ``` ```python ``` lines (a closing
fence has no info string). Only ```python/```py and ```bash/```sh/```shell blocks run; any other language, and an
unlabeled block, is shown but not run, and the model is told so when that is all it wrote. A block that is never
closed (a reply cut off mid-block) does not run: half a script is worse than none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

Runner = Literal["python", "shell"]

LANGUAGES: dict[str, Runner] = {
    "python": "python", "py": "python", "python3": "python", "py3": "python",
    "bash": "shell", "sh": "shell", "shell": "shell",
}
"""Fence labels that run, and the runner each maps to (case-insensitive; only the info string's first word counts)."""

_OPEN = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_PATH = re.compile(r"^(?:\.{0,2}/)?[\w.\-]+(?:/[\w.\-]+)*\.[A-Za-z][A-Za-z0-9]{0,7}(?:::[\w.]+)?$")
_KEYED = re.compile(r"^(?:file|path|title|filename|name)\s*[=:]\s*", re.I)


@dataclass(frozen=True, slots=True)
class Block:
    """A fenced block. ``runner`` is None when it does not run; ``line`` is its opening fence's 1-based line."""

    label: str
    code: str
    line: int
    runner: Runner | None = None
    closed: bool = True
    end: int = 0  # the closing fence's line (the last line of the text when the block is not closed)
    target: str | None = None  # an edit block: the file it writes (relative, as the model wrote it)
    symbol: str | None = None  # an edit block anchored to one definition (``Class.method``)
    inferred: bool = False  # an edit the harness recognised (no label): see tomo.oi.engine.Engine.recognise

    @property
    def runs(self) -> bool:
        return self.runner is not None and self.closed and self.target is None

    @property
    def edits(self) -> bool:
        return self.target is not None and self.closed

    @property
    def acts(self) -> bool:
        return self.runs or self.edits


@dataclass(frozen=True, slots=True)
class Extraction:
    """Every fenced block of a reply, in order; ``runnable`` are those that run."""

    blocks: list[Block] = field(default_factory=list)

    @property
    def runnable(self) -> list[Block]:
        return [b for b in self.blocks if b.runs]

    @property
    def actions(self) -> list[Block]:
        """The blocks that do something, in order: those that run and the edits."""
        return [b for b in self.blocks if b.acts]

    @property
    def skipped(self) -> list[Block]:
        return [b for b in self.blocks if not b.acts]

    def skipped_note(self) -> str:
        """What to tell the model when it wrote blocks but none of them runs (empty when there is nothing to say)."""
        if self.actions or not self.blocks:
            return ""
        parts = []
        for b in self.blocks:
            if not b.closed:
                parts.append(f"the block opened at line {b.line} was never closed")
            else:
                parts.append(f"the block at line {b.line} is {'labeled ' + repr(b.label) if b.label else 'unlabeled'}")
        return ("[tomo] Nothing was run: " + "; ".join(parts) + ". Only fenced blocks labeled python (or py) and bash "
                "(or sh, shell) run. If you meant to run something, write it in such a block; if you are done, say so.")


def extract(text: str) -> Extraction:
    """Every fenced block of ``text`` in order, each marked runnable or not (see the module's rules)."""
    lines = text.split("\n")
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        opened = _OPEN.match(lines[i])
        if opened is None or (opened["fence"][0] == "`" and "`" in opened["info"]):
            i += 1
            continue
        fence, indent = opened["fence"], len(opened["indent"])
        label, target, symbol = _info(opened["info"])
        body: list[str] = []
        j = i + 1
        closed = False
        while j < len(lines):
            if _closes(lines[j], fence):
                closed = True
                break
            body.append(_dedent(lines[j], indent))
            j += 1
        blocks.append(Block(label=label, code="\n".join(body) + ("\n" if body else ""), line=i + 1,
                            runner=LANGUAGES.get(label), closed=closed, end=min(j + 1, len(lines)), target=target,
                            symbol=symbol))
        i = j + 1
    return Extraction(blocks)


def _info(info: str) -> tuple[str, str | None, str | None]:
    """(label, edit target, symbol) of a fence's info string: ``python``, ``python pkg/mod.py``,
    ``python pkg/mod.py::Name``, ``python file=pkg/mod.py``, ``python:pkg/mod.py``, ``pkg/mod.py``."""
    words = info.strip().split()
    if not words:
        return "", None, None
    first = words[0].strip("{}")
    if ":" in first and not first.startswith(("file", "path", "title")) and "::" not in first.split(":", 1)[0]:
        head, _, rest = first.partition(":")
        if head.lower() in LANGUAGES and rest:
            words = [head, rest, *words[1:]]
            first = head
    target = None
    for word in words[1:] if first.lower() in LANGUAGES or not _is_path(first) else words[:1]:
        candidate = _KEYED.sub("", word).strip("\"'`{},")
        if _is_path(candidate):
            target = candidate
            break
    label = "" if target and _is_path(first) else first.strip(".").lower()
    if target is None:
        return label, None, None
    path, _, symbol = target.partition("::")
    if label == "" and path.endswith(".py"):
        label = "python"
    return label, path.removeprefix("./"), symbol or None


def _is_path(word: str) -> bool:
    return bool(_PATH.match(word)) and not word.startswith("-")


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    if len(line) - len(line.lstrip(" ")) > 3 or not stripped:
        return False
    run = len(stripped) - len(stripped.lstrip(fence[0]))
    return run >= len(fence) and not stripped[run:].strip()


def _dedent(line: str, indent: int) -> str:
    """CommonMark: content lines lose up to the opening fence's indentation."""
    removable = len(line) - len(line.lstrip(" "))
    return line[min(indent, removable):]


def without_runnable(text: str) -> str:
    """``text`` with its runnable and edit blocks taken out (a log shows each block on its own, before it runs)."""
    found = extract(text).actions
    if not found:
        return text
    lines = text.split("\n")
    drop = {n for b in found for n in range(b.line, b.end + 1)}
    kept = [line for n, line in enumerate(lines, 1) if n not in drop]
    return "\n".join(kept).strip()
