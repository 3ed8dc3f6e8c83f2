"""Rename-and-test on flask's own suite: copy, rename with one tool, run flask's tests, and look for over-renames.

Tests cannot see a consistent over-rename (a blind ``sed`` keeps them green), so every copy is also compared with the
original by its *public names* (module-level and class-level definitions in every .py file): the only change allowed
is the renamed method itself. Missed call sites show up as failing tests and as leftover ``.old`` attribute uses.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.graph_peers.data import python_files

FLASK_TEST_DEPS = [
    "pytest==9.0.2",
    "blinker",
    "click",
    "itsdangerous",
    "jinja2",
    "markupsafe",
    "werkzeug",
    "asgiref",
    "greenlet",
    "python-dotenv",
]  # flask's own "tests" group, pytest pinned per PEERS.md


def ensure_venv(data: Path) -> Path:
    """A separate venv for flask's tests, so the project's own pytest stays untouched."""
    venv = data / "flaskvenv"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *FLASK_TEST_DEPS], check=True)
    return python


def fresh_copy(src: Path, dest: Path) -> Path:
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(
        src, dest, ignore=shutil.ignore_patterns(".tomo", ".ropeproject", "__pycache__", "pyrightconfig.json")
    )
    return dest


def run_tests(python: Path, root: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE", "--tb=no"],
        cwd=root,
        env={"PYTHONPATH": str(root / "src"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    tail = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-300:]
    counts = {k: int(n) for n, k in re.findall(r"(\d+) (passed|failed|errors?)", tail)}
    failing = sorted(set(re.findall(r"^(?:FAILED|ERROR) (\S+)", proc.stdout, re.M)))
    return {
        "passed": counts.get("passed", 0),
        "failed": counts.get("failed", 0) + counts.get("error", 0) + counts.get("errors", 0),
        "failing": failing,
        "summary": tail,
    }


def public_names(root: Path) -> set[str]:
    """``path::Class.name`` for every module- and class-level definition (functions, classes, assigned names)."""
    names: set[str] = set()

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(prefix + node.name)
                if isinstance(node, ast.ClassDef):
                    walk(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update(prefix + t.id for t in targets if isinstance(t, ast.Name))

    for path in python_files(root):
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue
        walk(tree.body, path.relative_to(root).as_posix() + "::")
    return names


def attribute_uses(root: Path, attr: str) -> int:
    """How many ``x.attr`` expressions remain in the copy (calls the rename did not reach, or unrelated ones)."""
    count = 0
    for path in python_files(root):
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue
        count += sum(1 for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == attr)
    return count


def changed_lines(original: Path, copy: Path) -> tuple[int, int]:
    """(lines changed, files changed) between the pristine tree and a renamed copy."""
    import difflib

    lines = files = 0
    for path in python_files(copy):
        before_path = original / path.relative_to(copy)
        before = before_path.read_text(encoding="utf-8").splitlines() if before_path.exists() else []
        after = path.read_text(encoding="utf-8").splitlines()
        if before != after:
            files += 1
            sm = difflib.SequenceMatcher(None, before, after, autojunk=False)
            lines += sum(i2 - i1 for tag, i1, i2, _, _ in sm.get_opcodes() if tag != "equal")
    return lines, files
