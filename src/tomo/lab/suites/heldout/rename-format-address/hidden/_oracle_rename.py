"""Oracle for a rename task: the project's tests (hidden ones included) pass, and the old name is gone from the code.

Usage: python _oracle_rename.py OLD_NAME

"Gone" means no Python name token and no string literal equal to OLD_NAME (``__all__`` entries, ``getattr`` names)
in any .py file of the project; comments and prose in docstrings are not judged. The oracle's own files
(``_oracle_*``, ``test_hidden_*``, ``_original/``) are skipped. Standard library only.
"""

from __future__ import annotations

import ast
import io
import os
import subprocess
import sys
import tokenize
from pathlib import Path

SKIP_DIRS = {"__pycache__", "_original", ".git", ".venv", "venv", "node_modules"}


def _skipped(rel: Path) -> bool:
    if rel.name.startswith(("_oracle_", "test_hidden_")):
        return True
    return any(part in SKIP_DIRS or part.startswith(".") for part in rel.parts[:-1])


def leftovers(root: Path, old: str) -> list[str]:
    """Every place (file:line) where ``old`` is still used as a name or named by a string literal."""
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if _skipped(rel):
            continue
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline))
        except (SyntaxError, tokenize.TokenError, UnicodeDecodeError) as exc:
            found.append(f"{rel}: cannot be read as Python ({exc})")
            continue
        for tok in tokens:
            if tok.type == tokenize.NAME and tok.string == old:
                found.append(f"{rel}:{tok.start[0]}")
            elif tok.type == tokenize.STRING:
                try:
                    value = ast.literal_eval(tok.string)
                except (ValueError, SyntaxError):
                    continue
                if value == old:
                    found.append(f"{rel}:{tok.start[0]} (string)")
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python _oracle_rename.py OLD_NAME", file=sys.stderr)
        return 2
    old = argv[0]
    root = Path.cwd()
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=root, env=env)
    if tests.returncode != 0:
        print(f"FAIL: the test suite does not pass (pytest exit code {tests.returncode})")
        return 1
    left = leftovers(root, old)
    if left:
        print(f"FAIL: {old!r} is still used at:")
        for place in left:
            print(f"  {place}")
        return 1
    print(f"OK: tests pass and {old!r} is gone")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
