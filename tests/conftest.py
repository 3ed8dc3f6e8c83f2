"""Shared fixtures. ``run_tomo`` runs the real CLI in a subprocess against *this* checkout's sources."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"


def tomo_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SRC) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    # the same terminal in every runner: a pytest-xdist worker's environment carries COLUMNS=80 and LINES=24
    env["COLUMNS"] = "200"
    env.pop("LINES", None)
    env.update(extra)
    return env


@pytest.fixture
def tomo_environ() -> dict[str, str]:
    """The environment ``run_tomo`` gives its processes, for a test that starts one itself (to signal it)."""
    return tomo_env()


@pytest.fixture
def run_tomo() -> Callable[..., subprocess.CompletedProcess[str]]:
    def run(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
            timeout: float = 120, input: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "tomo", *args], capture_output=True, text=True, cwd=cwd,
            env=tomo_env(**(env or {})), timeout=timeout, input=input,
            # no inherited stdin: `tomo exec` passes a piped stdin on, and a test must not depend on the runner's
            stdin=subprocess.DEVNULL if input is None else None,
        )

    return run
