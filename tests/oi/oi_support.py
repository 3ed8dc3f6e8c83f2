"""Shared by the oi tests (imported as ``oi.oi_support``: tests/ is on sys.path and tests/oi is a package): a small
real project with a bug, the strict-box requirement, scripted replies."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tomo.oi.context_pack import Pack, Weights, rank
from tomo.oi.context_search import Retrieval
from tomo.prism import Graph
from tomo.sandbox import Limits

MiB = 1024 * 1024
LIMITS = Limits(timeout_s=30, memory_bytes=1024 * MiB, cpu_s=30, max_pids=128, output_bytes=200_000)
IN_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
PYTEST = "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python -m pytest -q -p no:cacheprovider"
"""How the scripted models run the tests: no plugin autoloading (the shared environment has many; seconds each)."""


CALC = '''\
import math


def add(a, b):
    return a - b


def area(r):
    return math.pi * r * r
'''
TEST_CALC = '''\
from calc import add


def test_add():
    assert add(2, 3) == 5
'''
TEST_AREA = '''\
from calc import area


def test_area():
    assert round(area(1), 2) == 3.14
'''
TEST_OTHER = '''\
def test_other():
    assert 1 + 1 == 2
'''


def require_bwrap() -> None:
    if shutil.which("bwrap") is not None:
        return
    if IN_CI:
        pytest.fail("bubblewrap is not installed on CI: apt-get install bubblewrap")
    pytest.skip("bubblewrap is not installed (apt-get install bubblewrap); the strict-box tests need it")


def sh(command: str) -> dict[str, Any]:
    return {"content": f"I will run this.\n\n```bash\n{command}\n```\n"}


def py(code: str) -> dict[str, Any]:
    return {"content": f"```python\n{code}\n```"}


def say(text: str) -> dict[str, Any]:
    return {"content": text}


FIX = sh("sed -i 's/return a - b/return a + b/' calc.py")
RED = sh(f"{PYTEST} tests/test_calc.py")
GREEN = sh(f"{PYTEST} tests")


CTX_FIXTURE = Path(__file__).parent / "ctx_fixture_repo"
"""The context pack's fixture repository (tests copy it: the pack writes its index under ROOT/.tomo/)."""


def copy_ctx_fixture(tmp_path: Path) -> Path:
    dest = tmp_path / "repo"
    shutil.copytree(CTX_FIXTURE, dest, ignore=shutil.ignore_patterns(".tomo", "__pycache__"))
    return dest


def rank_in(repo: Path, task: str, **weights: Any) -> Pack:
    """The pack's ranking of ``task`` in ``repo`` with these ``Weights`` (no preamble)."""
    with Graph.open(repo) as graph:
        retrieval = Retrieval(graph.root, graph.conn.execute("SELECT path, hash FROM files").fetchall())
        try:
            return rank(graph, retrieval, task, weights=Weights(**weights))
        finally:
            retrieval.close()


def run_pytest(root: Path, name: str, code: str) -> subprocess.CompletedProcess[str]:
    """``code`` written as tests/``name`` under ``root`` and run by real pytest there."""
    (root / "tests" / name).write_text(code)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"tests/{name}"],
                          cwd=root, capture_output=True, text=True, timeout=120)


def hidden_tests(root: Path, task_dir: Path, test: str) -> subprocess.CompletedProcess[str]:
    """A lab task's hidden tests (``task_dir``/hidden) laid over ``root`` and ``test`` run there by real pytest: the
    task's own oracle, which judges a turn's result, never tomo's claim."""
    shutil.copytree(task_dir / "hidden", root, dirs_exist_ok=True)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test], cwd=root,
                          capture_output=True, text=True, timeout=120)
