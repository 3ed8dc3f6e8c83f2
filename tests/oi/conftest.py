"""Fixtures for the oi tests: the real sandboxes, a small project with a bug, an engine on scripted replies.

The strict box needs bubblewrap: where it is missing the tests that need it skip with the reason, except on CI
(``CI`` set), where they FAIL, as in tests/sandbox.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from oi.oi_support import CALC, LIMITS, TEST_AREA, TEST_CALC, TEST_OTHER, require_bwrap
from tomo.models.scripted import ScriptedModel
from tomo.oi.engine import Engine
from tomo.sandbox import BubblewrapSandbox, LocalSandbox, Sandbox


@pytest.fixture
def strict() -> BubblewrapSandbox:
    require_bwrap()
    return BubblewrapSandbox(LIMITS)


@pytest.fixture
def local() -> LocalSandbox:
    return LocalSandbox(LIMITS)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """calc.py with a bug in add (it subtracts); tests for add, for area (passes, never calls add), and one that
    imports nothing."""
    root = tmp_path / "proj"
    (root / "tests").mkdir(parents=True)
    (root / "calc.py").write_text(CALC)
    (root / "tests" / "test_calc.py").write_text(TEST_CALC)
    (root / "tests" / "test_area.py").write_text(TEST_AREA)
    (root / "tests" / "test_other.py").write_text(TEST_OTHER)
    (root / "conftest.py").write_text("")  # rootdir on sys.path for `from calc import ...`
    return root


@pytest.fixture
def make_engine() -> Callable[..., tuple[Engine, ScriptedModel]]:
    def make(sandbox: Sandbox, root: Path, replies: list[dict[str, Any]],
             **kwargs: Any) -> tuple[Engine, ScriptedModel]:
        model = ScriptedModel(replies)
        kwargs.setdefault("max_rounds", 10)
        kwargs.setdefault("context", False)
        kwargs.setdefault("limits", LIMITS)
        return Engine(model, sandbox, workspace=root, **kwargs), model

    return make
