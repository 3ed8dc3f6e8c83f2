"""Per-run cgroups: the limits are written, the run joins before it executes, and nothing is left behind."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tomo.sandbox import LocalSandbox
from tomo.sandbox import cgroup as cgroup_module
from tomo.sandbox.cgroup import Cgroups


@pytest.fixture
def cgroups() -> Cgroups:
    made, why = Cgroups.create(7, 300 * 1024 * 1024)
    if made is None:
        pytest.skip(f"tomo cannot create cgroups on this machine: {why}")
    return made


def test_limits_are_written_and_removed(cgroups: Cgroups) -> None:
    values = {p.name: p.read_text().strip() for d in cgroups.dirs for p in d.iterdir()
              if p.name in ("pids.max", "memory.limit_in_bytes", "memory.max")}
    assert values.get("pids.max") == "7"
    assert values.get("memory.limit_in_bytes", values.get("memory.max")) == str(300 * 1024 * 1024)
    cgroups.remove()
    assert not any(d.exists() for d in cgroups.dirs)


async def test_a_run_is_inside_its_cgroup_from_the_start(ws: Path, cgroups: Cgroups) -> None:
    cgroups.remove()
    result = await LocalSandbox().run("cat /proc/self/cgroup", "shell", ws)
    assert "tomo-" in result.output  # the command itself, not only a later child, is in the run's cgroup
    assert not [d for d in cgroups.dirs[0].parent.iterdir() if d.name.startswith(f"tomo-{os.getpid()}-")]


async def test_cgroups_left_by_a_killed_tomo_are_swept(ws: Path, cgroups: Cgroups,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    cgroups.remove()
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = cgroups.dirs[0].parent / f"tomo-{dead.pid}-0"
    stale.mkdir()
    monkeypatch.setattr(cgroup_module, "_swept", set())
    await LocalSandbox().run("true", "shell", ws)
    assert not stale.exists()
