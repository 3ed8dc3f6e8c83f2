"""What a block changed: the workspace's content hashes before and after, and which lines of which files differ.

Comparing contents (not watching commands) means a file written by ``sed -i``, by Python, by a heredoc or by a build
step counts the same. ``.tomo/`` (tomo's own state: sessions, the exec gate's traces), version-control folders and
caches that tools rewrite on every run (``__pycache__``, ``.pytest_cache``...) are not the workspace's content and are
skipped; so are installed-dependency trees (``node_modules``, virtualenvs), which are large and not the task's code.
A file whose size and mtime did not move is not re-read: its previous hash stands, so a snapshot of a large
repository costs a ``stat`` per file after the first.
"""

from __future__ import annotations

import difflib
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

SKIP_DIRS = frozenset({
    ".tomo", ".git", ".hg", ".svn", ".bzr", "_darcs", ".jj",
    "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis", ".tox", ".nox", ".eggs",
    "node_modules", ".venv", "venv", ".cache",
})
SKIP_SUFFIXES = (".pyc", ".pyo")

CODE_SUFFIXES: dict[str, str] = {
    ".py": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".tsx": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".go": "go", ".rs": "rust",
    ".sh": "shell", ".bash": "shell",
    ".rb": "ruby", ".java": "java", ".kt": "kotlin", ".scala": "scala", ".swift": "swift",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp",
    ".cs": "csharp", ".php": "php", ".lua": "lua", ".pl": "perl", ".ex": "elixir", ".exs": "elixir",
}
"""Files whose change the exec gate asks to see executed. Other files (docs, data, configuration) are edits too
(they are reported) but there is nothing to execute in them."""

KEEP_BYTES = 2 * 1024 * 1024
"""Code files up to this size keep their turn-start content, so changed lines can be computed (larger: all lines)."""


def language_of(path: str) -> str | None:
    return CODE_SUFFIXES.get(os.path.splitext(path)[1].lower())


@dataclass(slots=True)
class Snapshot:
    """Content hashes of the workspace's files (relative POSIX paths), and the content of its code files."""

    hashes: dict[str, str] = field(default_factory=dict)
    contents: dict[str, bytes] = field(default_factory=dict)

    def changed_since(self, earlier: Snapshot) -> list[str]:
        """Files added, removed or modified since ``earlier``, sorted."""
        keys = self.hashes.keys() | earlier.hashes.keys()
        return sorted(k for k in keys if self.hashes.get(k) != earlier.hashes.get(k))


class Scanner:
    """Takes snapshots of one workspace, re-hashing only files whose stat changed since the last one."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._stat: dict[str, tuple[int, int, int, str]] = {}

    def snapshot(self, *, keep_code: bool = False) -> Snapshot:
        """Hashes every file; with ``keep_code``, also keeps the bytes of code files (for line-level diffs later)."""
        snap = Snapshot()
        root = str(self.root)
        seen: dict[str, tuple[int, int, int, str]] = {}
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.endswith(".egg-info"))
            rel_dir = os.path.relpath(dirpath, root)
            for name in filenames:
                if name.endswith(SKIP_SUFFIXES):
                    continue
                full = os.path.join(dirpath, name)
                rel = name if rel_dir == "." else f"{rel_dir}/{name}".replace(os.sep, "/")
                try:
                    st = os.stat(full, follow_symlinks=False)
                except OSError:
                    continue
                key = (st.st_mtime_ns, st.st_size, st.st_ino)
                cached = self._stat.get(rel)
                want_bytes = keep_code and language_of(rel) is not None and st.st_size <= KEEP_BYTES
                if cached is not None and cached[:3] == key and not want_bytes:
                    digest = cached[3]
                else:
                    data = _read(full, st)
                    if data is None:
                        continue
                    digest = hashlib.blake2b(data, digest_size=16).hexdigest()
                    if want_bytes:
                        snap.contents[rel] = data
                seen[rel] = (*key, digest)
                snap.hashes[rel] = digest
        self._stat = seen
        return snap


def _read(full: str, st: os.stat_result) -> bytes | None:
    import stat as stat_

    if stat_.S_ISLNK(st.st_mode):
        try:
            return b"symlink:" + os.readlink(full).encode("utf-8", "surrogateescape")
        except OSError:
            return None
    if not stat_.S_ISREG(st.st_mode):
        return None
    try:
        with open(full, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def changed_lines(old: bytes | None, new: bytes) -> set[int]:
    """1-based line numbers of ``new`` that are new or replaced relative to ``old`` (a new file: all of them).

    A pure deletion marks the line that now stands where the deleted lines were, so removing a guard still asks for
    the code around it to run.
    """
    new_lines = new.decode("utf-8", "replace").splitlines()
    if old is None:
        return set(range(1, len(new_lines) + 1))
    old_lines = old.decode("utf-8", "replace").splitlines()
    out: set[int] = set()
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            out.update(range(j1 + 1, j2 + 1))
        elif tag == "delete" and new_lines:
            out.add(min(j1 + 1, len(new_lines)))
            if j1 > 0:
                out.add(j1)
    return out
