"""Oracle for a repro task: the bug is fixed AND the project gained a test that catches it.

Usage: python _oracle_repro.py

1. The whole test suite passes here (the hidden ``test_hidden_*`` tests and the model's own new tests included).
2. In a scratch copy where the original source (shipped under ``_original/``) is laid back over the fixed files and
   the hidden tests are removed, the project's tests run and at least one FAILS (pytest exit code 1): some test the
   model wrote or changed reproduces the bug. A collection error (exit 2) or no tests (exit 5) does not count.
Standard library only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

TIMEOUT_S = 40


def _pytest(cwd: Path) -> int:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    try:
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                              cwd=cwd, env=env, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        print(f"pytest in {cwd} ran over {TIMEOUT_S} s")
        return -1
    return done.returncode


def _ignore(_dir: str, names: list[str]) -> list[str]:
    return [n for n in names
            if n in {"__pycache__", ".pytest_cache", "_original"} or n.startswith(("_oracle_", "test_hidden_"))]


def main() -> int:
    root = Path.cwd()
    original = root / "_original"
    if not original.is_dir():
        print("FAIL: _original/ is missing (the task is broken)")
        return 2
    code = _pytest(root)
    if code != 0:
        print(f"FAIL: the test suite does not pass on the fixed code (pytest exit code {code})")
        return 1
    with tempfile.TemporaryDirectory(prefix="repro-") as tmp:
        scratch = Path(tmp) / "project"
        shutil.copytree(root, scratch, ignore=_ignore)
        shutil.copytree(original, scratch, dirs_exist_ok=True)
        code = _pytest(scratch)
    if code != 1:
        print(f"FAIL: no test of the project fails against the original code (pytest exit code {code}, wanted 1)")
        return 1
    print("OK: fixed, and a test of the project fails against the original code")
    return 0


if __name__ == "__main__":
    sys.exit(main())
