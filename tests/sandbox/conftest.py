"""Fixtures for the sandbox tests: real boxes with small limits, workspaces, and host processes to protect.

The strict box needs bubblewrap. Where it is missing, the tests that need it skip with the reason -- except on CI
(``CI`` set), where they FAIL: the escape battery must never be silently skipped where it is supposed to run.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_support import SMALL, require_bwrap

from tomo.sandbox import BubblewrapSandbox, LocalSandbox


@pytest.fixture
def strict() -> BubblewrapSandbox:
    require_bwrap()
    return BubblewrapSandbox(SMALL)


@pytest.fixture
def local() -> LocalSandbox:
    return LocalSandbox(SMALL)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


@pytest.fixture
def repo() -> Iterator[Path]:
    """A project directory on the root filesystem (not under /tmp, which the box replaces): ``repo/ws`` is the
    workspace, ``repo`` is what sits above it."""
    base = Path(tempfile.mkdtemp(prefix="tomo-battery-", dir="/var/tmp"))
    (base / "ws").mkdir()
    (base / "setup.py").write_text("ORIGINAL\n")
    yield base
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def sentinel() -> Iterator[subprocess.Popen[bytes]]:
    """A host process the box must not be able to touch."""
    proc = subprocess.Popen(["sleep", "120"])
    yield proc
    proc.kill()
    proc.wait()
