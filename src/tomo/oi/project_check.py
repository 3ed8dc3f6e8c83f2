"""The project's own check, found the way a developer new to the project would: the test runner its files name.

``tomo run --check auto`` asks this; the engine runs the command itself when code changed and no check followed
(:meth:`tomo.oi.engine.Engine._run_check`). Detection reads file names only, never runs anything.
"""

from __future__ import annotations

from pathlib import Path

from tomo.oi.workspace import SKIP_DIRS

PYTEST = "python -m pytest -q -x --tb=short -p no:cacheprovider"


def detect_check(root: Path) -> str | None:
    """The command that runs the project's tests, or None when none is recognisable."""
    if (root / "pytest.ini").is_file() or (root / "conftest.py").is_file() or _has_python_tests(root):
        return PYTEST
    if (root / "go.mod").is_file():
        return "go test ./..."
    if (root / "Cargo.toml").is_file():
        return "cargo test -q"
    if (root / "package.json").is_file():
        return "npm test --silent"
    return None


def _has_python_tests(root: Path, limit: int = 5000) -> bool:
    seen = 0
    for path in root.rglob("*.py"):
        seen += 1
        if seen > limit:
            return False
        parts = path.relative_to(root).parts
        if any(p in SKIP_DIRS for p in parts):
            continue
        if path.name.startswith("test_") or path.name.endswith("_test.py"):
            return True
    return False
