"""Where a fix most likely goes: the project's definitions a failing test ran, in the order trials should try them.

Why: in the lab (issue 27) the context pack ranked `LRUCache.put` first and showed `LRUCache.get`, where the bug was,
as a signature only, so Qwen 2.5-Coder 1.5B rewrote `put` in every trial. The failing test itself knows better: the
exec gate's site hook, told to watch every project file, records which lines the red run executed. A definition none
of whose body ran cannot be where this failure comes from; one that ran, shown in full, can. The order is a guess
(what the reproduction calls, the traceback's frames from the deepest, the context pack's ranking, then the rest in
the order of the files), so trials take the suspects in turn rather than betting on the first.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tomo.oi.gates import is_test_path

MAX_SUSPECTS = 6
"""More would not be reached: a turn has eight rounds, and a suspect is worth a second look before a seventh."""

_FRAME = re.compile(r"^([\w./-]+\.py):(\d+):", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Definition:
    """A function or method of a project file: ``name`` is qualified (``Class.method``), lines are 1-based and
    inclusive, ``start`` counts the decorators."""

    path: str
    name: str
    start: int
    end: int
    body: frozenset[int]

    def source(self, root: Path) -> str:
        lines = (root / self.path).read_text(encoding="utf-8", errors="replace").splitlines()
        return "\n".join(lines[self.start - 1:self.end])


def definitions(root: Path, path: str) -> list[Definition]:
    """The functions and methods of ``path`` (a nested function belongs to the one around it); [] when it does not
    parse."""
    try:
        tree = ast.parse((root / path).read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return []
    found: list[Definition] = []

    def visit(body: Sequence[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                lines = {n.lineno for stmt in node.body for n in ast.walk(stmt) if isinstance(n, ast.stmt)}
                found.append(Definition(path, prefix + node.name, start, node.end_lineno or node.lineno,
                                        frozenset(lines)))

    visit(tree.body, "")
    return found


def frames(output: str) -> list[tuple[str, int]]:
    """The ``file.py:LINE:`` locations of a pytest failure, deepest first (pytest prints the outermost first)."""
    return [(m[1].removeprefix("./"), int(m[2])) for m in reversed(list(_FRAME.finditer(output)))]


def suspects(root: Path, lines: Mapping[str, Iterable[int]], output: str,
             preferred: Sequence[tuple[str, str]] = ()) -> list[Definition]:
    """The project definitions (never a test file's) whose body the failing run executed (``lines``: the site hook's
    lines per file), in trial order: ``preferred`` ((path, name) pairs; a bare name matches a method too), the
    failure's frames from the deepest, then the rest file by file."""
    ran: list[Definition] = []
    for path in sorted(lines):
        if not path.endswith(".py") or is_test_path(path):
            continue
        executed = set(lines[path])
        ran.extend(d for d in definitions(root, path) if d.body & executed)
    ordered: list[Definition] = []
    for path, name in preferred:
        ordered.extend(d for d in ran if d.path == path and (d.name == name or d.name.endswith("." + name)))
    for path, line in frames(output):
        ordered.extend(d for d in ran if d.path == path and d.start <= line <= d.end)
    ordered.extend(ran)
    return list(dict.fromkeys(ordered))[:MAX_SUSPECTS]
