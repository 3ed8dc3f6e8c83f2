"""What prism answers with: plain, frozen dataclasses that every consumer (CLI, assist, MCP, engines) shares.

A location is always ``path`` (relative to the graph's root, POSIX separators), 1-based ``line`` and 0-based ``col``
(tree-sitter's column, in characters). ``confidence`` is ``confirmed`` only when prism proved the binding;
everything else is ``ambiguous`` with a ``reason`` a person can check.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Confidence = Literal["confirmed", "ambiguous"]


@dataclass(frozen=True, slots=True)
class Symbol:
    """A definition: ``qualname`` is ``pkg.mod.Class.method``; ``kind`` is function|method|class|variable|module|..."""

    qualname: str
    name: str
    kind: str
    path: str
    line: int
    col: int
    end_line: int = 0
    language: str = "python"


@dataclass(frozen=True, slots=True)
class Reference:
    path: str
    line: int
    col: int
    text: str  # the source line, stripped, for display
    confidence: Confidence
    reason: str = ""
    kind: str = "reference"  # reference | call | import | definition | string | comment


@dataclass(frozen=True, slots=True)
class Occurrence:
    """A reference with the facts behind it (the enclosing scope and file id), for callers, impact and rename."""

    file_id: int
    scope: str
    ref: Reference


@dataclass(frozen=True, slots=True)
class Caller:
    symbol: Symbol  # the function that contains the call
    reference: Reference


@dataclass(frozen=True, slots=True)
class Callee:
    """A call made inside a function: ``symbol`` is what it calls when prism could bind it, else ``None``."""

    name: str
    symbol: Symbol | None
    reference: Reference


@dataclass(frozen=True, slots=True)
class ImpactItem:
    symbol: Symbol
    depth: int
    via: str  # "call" | "import" | "reference" (used without a call, e.g. passed as a callback)
    is_test: bool
    confidence: Confidence


@dataclass(frozen=True, slots=True)
class Edit:
    path: str
    line: int
    col: int
    old: str
    new: str
    confidence: Confidence
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Conflict:
    """An existing binding that the new name would collide with."""

    path: str
    line: int
    col: int
    reason: str


@dataclass(frozen=True, slots=True)
class Plan:
    """A rename plan: the edits plus the content hashes of every file they touch (to refuse stale files)."""

    symbol: Symbol
    new_name: str
    edits: tuple[Edit, ...]
    conflicts: tuple[Conflict, ...] = ()
    file_hashes: dict[str, str] = field(default_factory=dict)

    @property
    def confirmed(self) -> list[Edit]:
        return [e for e in self.edits if e.confidence == "confirmed"]

    @property
    def ambiguous(self) -> list[Edit]:
        return [e for e in self.edits if e.confidence == "ambiguous"]

    @property
    def files(self) -> list[str]:
        return sorted({e.path for e in self.edits})


@dataclass(frozen=True, slots=True)
class Applied:
    files: tuple[str, ...]
    edits_applied: int
    edits_skipped: int
    skipped_reasons: tuple[str, ...] = ()
