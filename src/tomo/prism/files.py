"""Which files belong to the graph, what language they are, and what Python module each one is.

A walk with ``os.scandir`` (stat comes free with the directory entry) is what keeps a no-change refresh cheap.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

LANGUAGES = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
}
# vendored and generated code is not the project's: skipping it keeps the index about the code people edit
SKIP_DIRS = frozenset({"node_modules", "__pycache__", "site-packages", "venv", "env", "target", "dist", "build",
                       "vendor"})
DOC_EXTS = (".md", ".rst", ".txt")
BINARY_PROBE = 8192  # a NUL byte in a file's first 8 KiB makes it binary, as git decides


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: str  # relative to root, POSIX
    mtime_ns: int
    size: int
    language: str
    module: str  # dotted name relative to its source root ("pkg.mod", "tests.test_x")
    import_name: str  # the name Python would import it by, following __init__.py packages upward
    is_pkg: bool


def is_binary(data: bytes) -> bool:
    """Whether ``data`` is a binary file's content (whatever its name says): no symbols, no references, no edits."""
    return b"\0" in data[:BINARY_PROBE]


def walk(root: str, unreadable: list[str] | None = None) -> list[SourceFile]:
    """Every source file under ``root`` that prism reads (the rule: :func:`files_under`).

    A file or folder whose name is not valid UTF-8 cannot be stored, imported or named in a query, so it is skipped;
    its path (with the bad bytes as surrogates) goes to ``unreadable`` so the caller can say so instead of failing.
    """
    found = [(rel, e) for rel, e in files_under(root, tuple(LANGUAGES), unreadable)
             if not rel.endswith((".min.js", ".bundle.js"))]
    init_dirs = {rel.rpartition("/")[0] for rel, _ in found if rel.endswith("/__init__.py") or rel == "__init__.py"}
    src_root = os.path.isdir(os.path.join(root, "src")) and not os.path.exists(os.path.join(root, "src", "__init__.py"))
    out = []
    for rel, e in found:
        try:
            st = e.stat(follow_symlinks=False)
        except OSError:
            continue
        ext = rel[rel.rfind(".") :]
        lang = LANGUAGES[ext]
        module, import_name, is_pkg = module_names(rel, src_root, init_dirs)
        out.append(SourceFile(rel, st.st_mtime_ns, st.st_size, lang, module, import_name, is_pkg))
    out.sort(key=lambda f: f.path)
    return out


def doc_files(root: str) -> list[str]:
    """The documentation files under ``root`` (by the same rule as the source: a rename's mentions are looked for in
    the files the index covers, never in a folder it skips)."""
    return sorted(rel for rel, _ in files_under(root, DOC_EXTS))


# (the directory a .gitignore sits in, relative to root, "" for root; its patterns), outermost first
Ignores = tuple[tuple[str, "_IgnoreFile"], ...]


def files_under(root: str, exts: tuple[str, ...],
                unreadable: list[str] | None = None) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """(path relative to ``root``, its directory entry) for every file ending in one of ``exts`` that prism reads.

    The one rule for everything prism walks (the index, a rename's documentation files): hidden names, the folders
    of :data:`SKIP_DIRS` and ``*.egg-info`` are skipped, and so is what git ignores: every ``.gitignore`` at or
    under ``root`` (a deeper one overrides a shallower, the last matching line wins, ``!`` re-includes, a pattern
    ending in ``/`` matches folders only) and ``.git/info/exclude``. A folder that is skipped is not entered. The
    ``.gitignore`` files of folders above ``root`` and git's global excludes are not read.
    """
    stack: list[tuple[str, Ignores]] = [("", _root_ignores(root))]
    while stack:
        rel, ignores = stack.pop()
        try:
            with os.scandir(os.path.join(root, rel) if rel else root) as it:
                entries = list(it)
        except OSError:
            continue
        if any(e.name == ".gitignore" for e in entries):
            spec = _gitignore(os.path.join(root, rel, ".gitignore"))
            if spec is not None:
                ignores = (*ignores, (rel, spec))
        for e in entries:
            name = e.name
            if name.startswith("."):
                continue
            path = f"{rel}/{name}" if rel else name
            if not _utf8(name):
                if unreadable is not None:
                    unreadable.append(path)
                continue
            if e.is_dir(follow_symlinks=False):
                if name not in SKIP_DIRS and not name.endswith(".egg-info") and not _ignored(ignores, path + "/"):
                    stack.append((path, ignores))
            elif name.endswith(exts) and not _ignored(ignores, path):
                yield path, e


def _ignored(ignores: Ignores, path: str) -> bool:
    """Whether git ignores ``path`` (a folder's ends in ``/``): the deepest .gitignore with a matching line says."""
    for base, spec in reversed(ignores):
        decided = spec.decides(path[len(base) + 1 :] if base else path)
        if decided is not None:
            return decided
    return False


class _IgnoreFile:
    """One ignore file's patterns, as pathspec reads them (git's rules: a folder pattern matches what lies under it,
    a file pattern beats a folder pattern, the last matching line wins).

    pathspec tries the patterns one by one in Python, about 0.3 µs each: for a 150-line .gitignore, 50 µs per file,
    a tenth of a second on every refresh of a mid-sized repository. Most files match no line at all, so all the
    patterns' expressions joined in one (compiled once, tried in C) answer that case first; pathspec decides only
    when some line matches. The join cannot change an answer: it matches exactly when one of the lines does.
    """

    __slots__ = ("any_line", "spec")

    def __init__(self, lines: list[str]) -> None:
        from pathspec import GitIgnoreSpec  # (here: a tree without a .gitignore never imports it)

        self.spec = GitIgnoreSpec.from_lines(lines)
        sources = [regex.pattern for p in self.spec.patterns
                   if p.include is not None and (regex := getattr(p, "regex", None)) is not None]
        try:
            self.any_line: Callable[[str], Any] | None = _joined(sources).search if sources else None
        except (re.error, TypeError):
            self.any_line = lambda path: True  # (an expression that does not join: ask pathspec every time)

    def decides(self, path: str) -> bool | None:
        """True: ignored; False: re-included by a ``!`` line; None: no line matches (a shallower file decides)."""
        if self.any_line is None or self.any_line(path) is None:
            return None
        include = self.spec.check_file(path).include
        return None if include is None else bool(include)


def _joined(sources: list[str]) -> re.Pattern[str]:
    """One expression that matches where any of ``sources`` does. Each line's expression names its folder mark
    (``(?P<ps_d>/)``), and a name may appear once in an expression: the join drops the names. Most lines match at any
    depth (``^(?:.+/)?NAME...``): they share that prefix once, so a path's folders are tried once, not once a line."""
    anywhere, others = [], []
    for src in sources:
        src = _GROUP_NAME.sub("(?:", src)
        if src.startswith(_ANY_DEPTH):
            anywhere.append(src[len(_ANY_DEPTH) :])
        else:
            others.append(src)
    if anywhere:
        others.append(_ANY_DEPTH + "(?:" + "|".join(f"(?:{src})" for src in anywhere) + ")")
    return re.compile("|".join(f"(?:{src})" for src in others))


_GROUP_NAME = re.compile(r"\(\?P<\w+>")
_ANY_DEPTH = "^(?:.+/)?"


def _root_ignores(root: str) -> Ignores:
    spec = _gitignore(os.path.join(root, ".git", "info", "exclude"))
    return (("", spec),) if spec is not None else ()


def _gitignore(path: str) -> _IgnoreFile | None:
    """The patterns of one ignore file (None when it has none, or cannot be read: then nothing is ignored by it)."""
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    if not any(ln.strip() and not ln.startswith("#") for ln in lines):
        return None
    return _IgnoreFile(lines)


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def module_names(rel: str, src_root: bool, init_dirs: set[str]) -> tuple[str, str, bool]:
    stem = rel[: rel.rfind(".")]
    parts = stem.split("/")
    is_pkg = parts[-1] == "__init__"
    if is_pkg:
        parts = parts[:-1]
    mod_parts = parts[1:] if src_root and parts and parts[0] == "src" and len(parts) > 1 else parts
    module = ".".join(mod_parts)
    # import name: climb while the directory is a package
    dirs = rel.split("/")[:-1]
    k = len(dirs)
    while k > 0 and "/".join(dirs[:k]) in init_dirs:
        k -= 1
    imp_parts = parts[k:]
    return module, ".".join(imp_parts), is_pkg
