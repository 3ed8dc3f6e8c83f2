"""Rename: plan every edit with its confidence, then apply all files or none.

A plan records the content hash of every file it touches; applying refuses when any of them changed since, and
checks that each edit still finds the old name at its position. Files are written to a temporary sibling and
moved into place with ``os.replace`` only after every new content has been computed and written.
"""

from __future__ import annotations

import builtins
import keyword
import os
import re
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from tomo.errors import PrismError
from tomo.prism.files import doc_files, is_binary
from tomo.prism.indexer import file_hash
from tomo.prism.model import Applied, Conflict, Edit, Occurrence, Plan, Symbol
from tomo.prism.resolve import Resolver

ALIAS_REASON = "via import alias"  # a confirmed use spelled with another name: never an edit

_BUILTIN_NAMES = frozenset(dir(builtins))


class RenameSource(Protocol):
    """What a rename reads from the code graph (:class:`tomo.prism.graph.Graph`, which plans through this module)."""

    root: Path
    conn: sqlite3.Connection

    def refresh(self) -> object: ...

    def occurrences(self, symbol: Symbol) -> list[Occurrence]: ...

    def iter_files(self, lang: str | None = None) -> Iterator[tuple[int, str]]: ...

    def line_at(self, path: str, line: int) -> str: ...

    def text_of(self, path: str) -> str: ...


def plan_rename(graph: RenameSource, sym: Symbol, new: str) -> Plan:
    if not new.isidentifier() or keyword.iskeyword(new):
        raise PrismError(f"`{new}` is not a valid identifier", hint="pass a name like new_name (letters, digits, _)")
    if sym.kind == "module":
        raise PrismError(f"`{sym.qualname}` is a module: renaming it means moving {sym.path}, which prism does not do",
                         hint="move the file yourself, then rename the imports (tomo graph refs shows them)")
    if new == sym.name:
        raise PrismError(f"`{sym.qualname}` is already named `{new}`", hint="pass a different new name")
    graph.refresh()
    occs = graph.occurrences(sym)
    edits: list[Edit] = []
    covered: set[tuple[str, int, int]] = set()
    for o in occs:
        r = o.ref
        if r.reason.startswith(ALIAS_REASON) or (r.path, r.line, r.col) in covered:
            continue  # spelled with the alias (nothing to edit there), or already planned
        covered.add((r.path, r.line, r.col))
        edits.append(Edit(r.path, r.line, r.col, sym.name, new, r.confidence, r.reason))
    conflicts = _conflicts(graph, sym, new, occs) if sym.language == "python" else []
    edits += _doc_mentions(graph, sym, new, covered)
    edits.sort(key=lambda e: (e.path, e.line, e.col))
    hashes = {}
    for path in sorted({e.path for e in edits}):
        hashes[path] = file_hash((graph.root / path).read_bytes())
    return Plan(sym, new, tuple(edits), tuple(conflicts), hashes)


def _conflicts(graph: RenameSource, sym: Symbol, new: str, occs: list[Occurrence]) -> list[Conflict]:
    res = Resolver(graph.conn, graph.root)
    out: list[Conflict] = []
    seen: set[tuple[str, int, int]] = set()
    shadowed: set[str] = set()
    owner = sym.qualname.rsplit(".", 1)[0]
    existing = res.definition(f"{owner}.{new}")
    if existing is None and sym.kind in ("method", "attribute", "variable"):
        d = res.definition(owner)
        if d is not None and d[3] == "class":
            m = res.member(owner, new)
            existing = res.definition(m) if m else None
    if existing is not None:
        fpath = res.file(existing[0])[0]
        out.append(Conflict(fpath, existing[4], existing[5],
                            f"`{new}` already exists in {owner}: the {existing[3]} {existing[1]}"))
        seen.add((fpath, existing[4], existing[5]))
    od = res.definition(owner) if sym.kind in ("method", "attribute", "variable") else None
    if od is not None and od[3] == "class":
        # a subclass that already has `new` would override the renamed member for its instances
        for fid, q, line, col in graph.conn.execute(
                "SELECT file_id, qualname, line, col FROM defs WHERE name=? AND kind IN "
                "('method', 'attribute', 'variable')", (new,)).fetchall():
            cls = q.rsplit(".", 1)[0]
            if cls != owner and owner in res.mro(cls):
                fpath = res.file(fid)[0]
                if (fpath, line, col) not in seen:
                    out.append(Conflict(fpath, line, col, f"`{new}` already exists in {cls}, a subclass of {owner}: "
                                                          f"it would override the renamed {sym.kind}"))
                    seen.add((fpath, line, col))
    for o in occs:
        r = o.ref
        if r.confidence != "confirmed" or r.kind in ("string", "keyword"):
            continue
        if (r.path, r.line, r.col) == (sym.path, sym.line, sym.col):
            continue  # the definition's own namespace was checked above
        line = graph.line_at(r.path, r.line)
        if f".{sym.name}" in line and r.kind not in ("definition", "import"):
            continue  # attribute access: the receiver's namespace was checked above
        v = res.lookup(o.file_id, o.scope, new, r.line)
        if (v is not None or res.is_bound(o.file_id, o.scope, new)) and (r.path, r.line, r.col) not in seen:
            what = v[1] if v is not None and v[0] in ("def", "mod", "ext") else "a local name"
            out.append(Conflict(r.path, r.line, r.col, f"`{new}` is already bound here (to {what})"))
            seen.add((r.path, r.line, r.col))
        elif new in _BUILTIN_NAMES and r.path not in shadowed and re.search(
                rf"(?<![\w.]){re.escape(new)}(?!\w)", graph.text_of(r.path)):
            shadowed.add(r.path)  # the new name hides the builtin for every other use of it in this module
            out.append(Conflict(r.path, r.line, r.col, f"`{new}` is a builtin that {r.path} also uses: "
                                                        "the rename would shadow it there"))
    return out


def _doc_mentions(graph: RenameSource, sym: Symbol, new: str, covered: set[tuple[str, int, int]]) -> list[Edit]:
    """Mentions in comments, docstrings and docs files: always ambiguous (reason "docs")."""
    word = re.compile(rf"(?<![\w]){re.escape(sym.name)}(?![\w])")
    out: list[Edit] = []
    py_files = [p for _, p in graph.iter_files("python")]
    for path in py_files + doc_files(str(graph.root)):  # the files the index covers, by its own rule
        try:
            data = (graph.root / path).read_bytes()
        except OSError:
            continue
        if is_binary(data):
            continue
        text = data.decode("utf-8", "replace")  # no newline translation
        if sym.name not in text:
            continue
        is_py = path.endswith((".py", ".pyi"))
        tree = None
        for i, line in enumerate(text.split("\n"), 1):
            if sym.name not in line:
                continue
            for m in word.finditer(line):
                if (path, i, m.start()) in covered:
                    continue
                if is_py:
                    if tree is None:
                        tree = _parse_py(text)
                    if not _in_comment_or_string(tree, i - 1, m.start(), line):
                        continue
                out.append(Edit(path, i, m.start(), sym.name, new, "ambiguous", "docs"))
    return out


def _parse_py(text: str):  # type: ignore[no-untyped-def]
    from tomo.prism.pyextract import _setup

    parser = _setup()[0]
    return parser.parse(text.encode("utf-8"))


def _in_comment_or_string(tree, row: int, col: int, line: str) -> bool:  # type: ignore[no-untyped-def]
    bcol = len(line[:col].encode("utf-8"))
    node = tree.root_node.descendant_for_point_range((row, bcol), (row, bcol))
    while node is not None:
        if node.type in ("comment", "string", "string_content"):
            return True
        if node.type in ("identifier", "block", "module"):
            return False
        node = node.parent
    return False


class LeavesReferences(PrismError):
    """Applying only a plan's confirmed edits would rename the definition and leave same-name references behind."""

    def __init__(self, plan: Plan, left: list[Edit]) -> None:
        super().__init__(f"{leaves_warning(plan, left)}; nothing was written",
                         hint="check those edits in the plan (tomo graph rename-plan), then apply with the ambiguous "
                              "edits included (--apply-ambiguous; MCP: include_ambiguous=true), or rename them by "
                              "hand first")
        self.plan = plan
        self.left = left


def left_behind(plan: Plan) -> list[Edit]:
    """The same-name code references a confirmed-only apply would leave while it renames the definition.

    JavaScript, TypeScript, Go, Rust and Java: any ambiguous edit outside the docs, because prism proves there only
    scopes and imports, so an unproven use is as likely the symbol as not. Python's plans apply their confirmed
    edits as they always have: its resolution already proves or rules out what a name can be bound to.
    """
    if plan.symbol.language == "python" or not any(e.confidence == "confirmed" for e in plan.edits):
        return []
    return [e for e in plan.edits if e.confidence == "ambiguous" and e.reason != "docs"]


def leaves_warning(plan: Plan, left: list[Edit]) -> str:
    """One line: how many references a confirmed-only apply would leave, and where the first few are."""
    where = ", ".join(f"{e.path}:{e.line}:{e.col}" for e in left[:3])
    more = f" and {len(left) - 3} more" if len(left) > 3 else ""
    refs = "reference" if len(left) == 1 else "references"
    return (f"applying only the confirmed edits would rename `{plan.symbol.name}` and leave {len(left)} same-name "
            f"{refs} that prism could not prove unrenamed ({where}{more})")


def apply_plan(root: Path, plan: Plan, include_ambiguous: bool = False) -> Applied:
    """Writes the plan's confirmed edits (all of them with ``include_ambiguous``) to every file, or nothing.

    Refuses (:class:`LeavesReferences`) when the confirmed edits alone would leave same-name references behind
    (:func:`left_behind`), so a half-renamed program is never written without the caller asking for it.
    """
    if not include_ambiguous:
        left = left_behind(plan)
        if left:
            raise LeavesReferences(plan, left)
    chosen = [e for e in plan.edits if e.confidence == "confirmed" or include_ambiguous]
    skipped = [e for e in plan.edits if e not in chosen]
    by_file: dict[str, list[Edit]] = {}
    for e in chosen:
        by_file.setdefault(e.path, []).append(e)
    # 1. every file must be exactly as planned
    contents: dict[str, bytes] = {}
    for path in by_file:
        try:
            data = (root / path).read_bytes()
        except OSError as exc:
            raise PrismError(f"cannot read {path}: {exc}", hint="re-run the rename plan") from exc
        want = plan.file_hashes.get(path)
        if want is None or file_hash(data) != want:
            raise PrismError(f"{path} changed since the plan was made; nothing was written",
                             hint="make a new plan (tomo graph rename-plan) and apply that")
        contents[path] = data
    # 2. compute every new content before writing anything
    new_contents: dict[str, bytes] = {}
    for path, edits in by_file.items():
        try:
            text = contents[path].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PrismError(f"{path} is not valid UTF-8 ({exc.reason} at byte {exc.start}); nothing was written",
                             hint="re-encode the file as UTF-8, or leave it out of the rename") from exc
        lines = text.split("\n")  # rows as tree-sitter counts them; "\r" stays at the end of its line
        for e in sorted(edits, key=lambda e: (e.line, e.col), reverse=True):
            if not 0 < e.line <= len(lines) or lines[e.line - 1][e.col : e.col + len(e.old)] != e.old:
                raise PrismError(f"{path}:{e.line}:{e.col} does not hold `{e.old}`; nothing was written",
                                 hint="the plan does not match the file; make a new plan")
            ln = lines[e.line - 1]
            lines[e.line - 1] = ln[: e.col] + e.new + ln[e.col + len(e.old) :]
        new_contents[path] = "\n".join(lines).encode("utf-8")
    # 3. write temp files, then move them all into place; undo the moves if one fails
    temps: dict[str, str] = {}
    try:
        for path, data in new_contents.items():
            target = root / path
            fd, tmp = tempfile.mkstemp(prefix=".tomo-", suffix=".tmp", dir=target.parent)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.chmod(tmp, target.stat().st_mode & 0o7777)
            temps[path] = tmp
        done: list[str] = []
        try:
            for path, tmp in temps.items():
                os.replace(tmp, root / path)
                done.append(path)
        except OSError as exc:
            for path in done:
                (root / path).write_bytes(contents[path])
            raise PrismError(f"writing {path} failed ({exc}); the files already written were restored",
                             hint="check permissions and disk space, then apply again") from exc
    finally:
        for tmp in temps.values():
            if os.path.exists(tmp):
                os.unlink(tmp)
    reasons = sorted({f"{e.reason or e.confidence}" for e in skipped})
    return Applied(tuple(sorted(new_contents)), len(chosen), len(skipped), tuple(reasons))
