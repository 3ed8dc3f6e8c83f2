"""Which files belong to the graph, what language they are, and what Python module each one is.

A walk with ``os.scandir`` (stat comes free with the directory entry) is what keeps a no-change refresh cheap.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

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


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: str  # relative to root, POSIX
    mtime_ns: int
    size: int
    language: str
    module: str  # dotted name relative to its source root ("pkg.mod", "tests.test_x")
    import_name: str  # the name Python would import it by, following __init__.py packages upward
    is_pkg: bool


def walk(root: str, unreadable: list[str] | None = None) -> list[SourceFile]:
    """Every source file under ``root``, skipping hidden, vendored and build directories.

    A file or folder whose name is not valid UTF-8 cannot be stored, imported or named in a query, so it is skipped;
    its path (with the bad bytes as surrogates) goes to ``unreadable`` so the caller can say so instead of failing.
    """
    found: list[tuple[str, os.DirEntry[str]]] = []
    init_dirs: set[str] = set()
    stack = [""]
    while stack:
        rel = stack.pop()
        try:
            it = os.scandir(os.path.join(root, rel) if rel else root)
        except OSError:
            continue
        with it:
            for e in it:
                name = e.name
                if name.startswith("."):
                    continue
                if not _utf8(name):
                    if unreadable is not None:
                        unreadable.append(f"{rel}/{name}" if rel else name)
                    continue
                if e.is_dir(follow_symlinks=False):
                    if name not in SKIP_DIRS and not name.endswith(".egg-info"):
                        stack.append(f"{rel}/{name}" if rel else name)
                    continue
                dot = name.rfind(".")
                if dot < 0 or name[dot:] not in LANGUAGES or name.endswith((".min.js", ".bundle.js")):
                    continue
                if name == "__init__.py":
                    init_dirs.add(rel)
                found.append((f"{rel}/{name}" if rel else name, e))
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
