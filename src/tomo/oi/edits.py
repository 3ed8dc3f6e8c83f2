"""Edit blocks: a fenced block labeled with a file is laid into that file by the harness, not run.

The path is the model's text, so it is data until proven a file of the workspace: relative, inside the root after
symlinks are resolved, not under tomo's or version control's folders. A Python file that exists takes the block as a
symbol-anchored replace (:func:`tomo.prism.splice.splice_python`); a file that does not exist is created with the
block; any other existing file gets the block as its whole new content. The write is atomic (a temporary file, then a
rename; the file's mode kept), so an edit is applied whole or not at all.

What the model reads back says what happened in words (replaced which definitions, added what, ignored which lines)
with a short diff, or why nothing was written and how to write it instead.
"""

from __future__ import annotations

import ast
import difflib
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from tomo.errors import PrismError
from tomo.oi.blocks import Block
from tomo.oi.workspace import SKIP_DIRS
from tomo.prism.splice import parse_block, splice_python

DIFF_LINES = 40
"""At most this many diff lines go back to the model (it wrote the code; the diff only confirms where it went)."""

EXAMPLE = ("```python path/to/module.py\ndef the_function(arg):\n    ...the whole corrected definition...\n```")

_PATH_COMMENT = re.compile(r"^#\s*(?:(?:file(?:name)?|path)\s*:\s*)?(?P<path>[\w.\-/]+\.py)\s*$", re.I)


@dataclass(slots=True)
class EditResult:
    """``ok``: written (or already as asked). ``changed``: the file's bytes differ now."""

    path: str
    ok: bool
    changed: bool
    summary: str
    diff: str = ""
    ignored: list[str] = field(default_factory=list)

    def report(self, number: int) -> str:
        """What the model reads."""
        status = "applied" if self.ok and self.changed else "nothing changed" if self.ok else "not applied"
        parts = [f"[block {number} (edit {self.path}) · {status}]", self.summary]
        if self.diff:
            parts.append(self.diff.rstrip("\n"))
        if self.ignored:
            parts.append("[tomo: not laid in (an edit block only replaces definitions, imports and assignments; run "
                         "code in a plain ```python block): " + "; ".join(self.ignored[:5]) + "]")
        return "\n".join(parts)


def resolve_target(root: Path, target: str) -> tuple[Path | None, str]:
    """The file an edit may write, or (None, why not). ``target`` is the model's text."""
    if "\x00" in target or target.startswith(("/", "~")) or re.match(r"^[A-Za-z]:", target):
        return None, f"`{target}` is not a path inside the project: write a path relative to the project root"
    parts = PurePosixPath(target).parts
    if ".." in parts:
        return None, f"`{target}` leaves the project (`..`): write a path relative to the project root"
    if any(p in SKIP_DIRS for p in parts[:-1]) or parts[-1] in SKIP_DIRS:
        return None, f"`{target}` is inside a folder tomo does not let an edit write (tomo's state, VCS, caches)"
    full = (root / target).resolve()
    if not full.is_relative_to(root.resolve()):
        return None, f"`{target}` resolves outside the project (a symbolic link): write the file it points to"
    if full.is_dir():
        return None, f"`{target}` is a directory: name a file"
    return full, ""


def path_comment(root: Path, block: Block) -> str | None:
    """A Python block whose first line is a comment naming an existing file of the project (``# pkg/mod.py``,
    ``# file: pkg/mod.py``) and that defines something: the model's way of saying "this is that file's code"."""
    if block.runner != "python" or block.target is not None:
        return None
    first = next((line.strip() for line in block.code.splitlines() if line.strip()), "")
    match = _PATH_COMMENT.match(first)
    if match is None:
        return None
    path = match["path"].removeprefix("./")
    full, _ = resolve_target(root, path)
    if full is None or not full.is_file():
        return None
    tree = _tree(block.code)
    if tree is None:
        return None
    defines = any(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) for n in tree.body)
    return path if defines else None


def definitions_only(block: Block) -> list[str]:
    """The names a Python block defines when it does nothing else at its top level (imports and a docstring aside);
    else []."""
    if block.runner != "python":
        return []
    tree = _tree(block.code)
    if tree is None:
        return []
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
        elif not (isinstance(node, ast.Import | ast.ImportFrom)
                  or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))):
            return []
    return names


def _tree(code: str) -> ast.Module | None:
    """The block's tree, a trailing command or sentence cut off as the splice will (``parse_block``); None when it
    does not parse."""
    try:
        return parse_block(code)[1]
    except (PrismError, ValueError):
        return None


def apply_edit(root: Path, target: str, code: str, symbol: str | None = None) -> EditResult:
    """Lays ``code`` into ``root/target`` (see the module); never raises for the model's mistakes."""
    full, why = resolve_target(root, target)
    if full is None:
        return EditResult(target, False, False, f"[tomo: {why}. Nothing was written.]")
    rel = full.relative_to(root.resolve()).as_posix()
    exists = full.is_file()
    try:
        old = full.read_text(encoding="utf-8") if exists else ""
    except (OSError, UnicodeDecodeError) as exc:
        return EditResult(rel, False, False, f"[tomo: cannot read {rel}: {exc}. Nothing was written.]")
    ignored: list[str] = []
    if exists and rel.endswith(".py"):
        try:
            done = splice_python(old, code, symbol)
        except PrismError as exc:
            return EditResult(rel, False, False, f"[tomo: {exc.message}; nothing was written to {rel}. "
                                                 f"{exc.hint}.]" if exc.hint else f"[tomo: {exc.message}.]")
        new, summary, ignored = done.text, done.describe(), done.ignored
    elif symbol:
        return EditResult(rel, False, False, f"[tomo: `::{symbol}` anchors work in existing Python files only; "
                                             f"{rel} {'is not Python' if exists else 'does not exist'}. Nothing was "
                                             "written.]")
    else:
        new = code if code.endswith("\n") or not code else code + "\n"
        summary = "wrote the whole file" if exists else "created the file"
    if exists and new == old:
        return EditResult(rel, True, False, f"[tomo: {rel} already holds exactly this; the file did not change. "
                                            "If the code is wrong, write the corrected definition.]", ignored=ignored)
    try:
        _write(full, new)
    except OSError as exc:
        return EditResult(rel, False, False, f"[tomo: cannot write {rel}: {exc}. Nothing was written.]")
    return EditResult(rel, True, True, f"{rel}: {summary}", diff=_diff(rel, old, new, exists), ignored=ignored)


def _write(full: Path, text: str) -> None:
    full.parent.mkdir(parents=True, exist_ok=True)
    mode = full.stat().st_mode & 0o7777 if full.exists() else None
    fd, tmp = tempfile.mkstemp(prefix=f".{full.name}.", suffix=".tomo-edit", dir=full.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, full)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _diff(rel: str, old: str, new: str, existed: bool) -> str:
    lines = list(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                      f"a/{rel}" if existed else "/dev/null", f"b/{rel}", n=1))
    if len(lines) > DIFF_LINES:
        cut = len(lines) - DIFF_LINES
        lines = [*lines[:DIFF_LINES], f"[tomo: {cut} more diff line(s) not shown]\n"]
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
