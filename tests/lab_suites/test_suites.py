"""The lab's bundled suites hold up: every task is well-formed and its oracle tells a solution from a non-solution.

For each task of ``small``, ``heldout`` and ``dev`` (src/tomo/lab/suites/<suite>/<task>/), in scratch copies:
the visible check passes on repo/ (or fails, when the task says ``visible_fails = true``); the oracle fails on
repo/ + hidden/; the oracle and the check pass on repo/ + reference/ + hidden/; a rename task's ``partial/``
overlay (a half-done rename) fails the oracle; a repro task's fix without its new test fails the oracle.
The conventions (hidden file names, the shared oracle scripts, partial/, visible_fails) are in
src/tomo/lab/suites/README.md.

This module reads the suites with the standard library only (it does not import tomo.lab: the runner is tested
on its own). Task commands run with ``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``: the task projects need no plugin, and
loading this environment's (hypothesis, playwright, ...) costs ~0.8 s per pytest start, ~150 starts here.
"""

from __future__ import annotations

import filecmp
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

import pytest

SUITES = Path(__file__).resolve().parents[2] / "src" / "tomo" / "lab" / "suites"
KINDS = {"fix", "rename", "feature", "repro"}
REQUIRED = {"id": str, "kind": str, "prompt": str, "oracle": str, "check": str}
OPTIONAL = {"timeout_s": int, "tags": list, "visible_fails": bool}
TASK_ID = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
# the mix each suite promises (small: at least; heldout: exactly)
SMALL_AT_LEAST = {"fix": 9, "rename": 4, "feature": 5, "repro": 4}
HELDOUT_EXACTLY = {"fix": 3, "rename": 1, "feature": 2, "repro": 1}
# the oracle helpers every task of a kind shares, byte for byte (one behaviour to keep right, not nine)
SHARED_SCRIPTS = {"rename": "_oracle_rename.py", "repro": "_oracle_repro.py"}
SUITE_NAMES = ("small", "heldout", "dev")
MAX_REPO_FILES = 7
MAX_REPO_LINES = 300


def _task_dirs() -> list[Path]:
    return sorted(d for suite in SUITE_NAMES for d in (SUITES / suite).iterdir() if d.is_dir())


def _load(task: Path) -> dict[str, object]:
    return tomllib.loads((task / "task.toml").read_text(encoding="utf-8"))


def _files(root: Path) -> list[Path]:
    """Relative paths of the files under ``root`` (bytecode caches left out)."""
    return sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def _lay(overlay: Path, dest: Path) -> None:
    """Lay ``overlay``'s files over ``dest``; a reference's ``.deleted`` lists files it removes."""
    deleted = overlay / ".deleted"
    shutil.copytree(overlay, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", ".deleted"))
    if deleted.exists():
        for line in deleted.read_text(encoding="utf-8").splitlines():
            if line.strip():
                (dest / line.strip()).unlink()


def _copy(tmp: Path, name: str, *overlays: Path) -> Path:
    dest = tmp / name
    for overlay in overlays:
        _lay(overlay, dest)
    return dest


def _run(command: str, cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    argv = shlex.split(command)
    if argv[0] == "python":
        argv[0] = sys.executable
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTEST_ADDOPTS"}}
    env.update(PYTHONDONTWRITEBYTECODE="1", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def _tail(done: subprocess.CompletedProcess[str]) -> str:
    return f"exit {done.returncode}\n{(done.stdout + done.stderr)[-2500:]}"


def test_the_suites_have_their_mix() -> None:
    for suite in SUITE_NAMES:
        meta = tomllib.loads((SUITES / suite / "suite.toml").read_text(encoding="utf-8"))
        assert meta["name"] == suite and meta["description"] and isinstance(meta["version"], int)
    kinds = {s: Counter(str(_load(t)["kind"]) for t in (SUITES / s).iterdir() if t.is_dir())
             for s in ("small", "heldout")}
    assert sum(kinds["small"].values()) >= 22
    assert all(kinds["small"][k] >= n for k, n in SMALL_AT_LEAST.items()), kinds["small"]
    assert kinds["heldout"] == Counter(HELDOUT_EXACTLY)
    ids = [t.name for t in _task_dirs()]
    assert len(ids) == len(set(ids)), "a task id is used in two suites"


def test_shared_oracle_scripts_are_identical() -> None:
    for kind, script in SHARED_SCRIPTS.items():
        copies = [t / "hidden" / script for t in _task_dirs() if _load(t)["kind"] == kind]
        assert copies and all(c.exists() for c in copies), f"every {kind} task ships hidden/{script}"
        first = copies[0]
        assert all(filecmp.cmp(first, c, shallow=False) for c in copies[1:]), f"the copies of {script} differ"


@pytest.mark.parametrize("task", _task_dirs(), ids=lambda t: f"{t.parent.name}/{t.name}")
def test_task(task: Path, tmp_path: Path) -> None:
    meta = _load(task)
    for key, kind in REQUIRED.items():
        assert isinstance(meta.get(key), kind) and meta[key], f"task.toml: {key} must be a non-empty {kind.__name__}"
    for key in meta.keys() - REQUIRED.keys():
        assert key in OPTIONAL and isinstance(meta[key], OPTIONAL[key]), f"task.toml: unexpected or mistyped {key}"
    assert meta["id"] == task.name and TASK_ID.fullmatch(task.name)
    kind = meta["kind"]
    assert kind in KINDS
    repo, hidden, reference = task / "repo", task / "hidden", task / "reference"
    assert _files(repo) and _files(hidden) and _files(reference)

    # small, and the hidden files never collide with the project's own (or shadow what the model writes)
    repo_files = _files(repo)
    assert len(repo_files) <= MAX_REPO_FILES, f"{len(repo_files)} files in repo/"
    lines = sum(len((repo / f).read_text(encoding="utf-8").splitlines()) for f in repo_files)
    assert lines < MAX_REPO_LINES, f"{lines} lines in repo/"
    for rel in _files(hidden):
        assert not (repo / rel).exists() and not (reference / rel).exists(), f"hidden/{rel} collides"
        if rel.parts[0] == "_original":
            continue
        assert rel.name.startswith(("test_hidden_", "_oracle_")), f"hidden/{rel}: name it test_hidden_* or _oracle_*"
        assert rel.stem not in str(meta["prompt"]), f"the prompt names hidden/{rel}"
    assert "hidden" not in str(meta["prompt"]).lower()

    timeout = float(meta.get("timeout_s", 60))  # type: ignore[arg-type]
    oracle, check = str(meta["oracle"]), str(meta["check"])

    start = _copy(tmp_path, "start", repo)
    done = _run(check, start, timeout)
    if meta.get("visible_fails"):
        assert done.returncode == 1, f"the visible check should fail (a test, not a crash) at the start:\n{_tail(done)}"
    else:
        assert done.returncode == 0, f"the visible check fails at the start:\n{_tail(done)}"
    _lay(hidden, start)
    done = _run(oracle, start, timeout)
    # tests that fail, not a crash: only a feature's hidden tests may fail to import what does not exist yet
    assert done.returncode == 1 or (kind == "feature" and done.returncode == 2), (
        f"the oracle should fail on the unsolved repo (exit 1):\n{_tail(done)}")

    solved = _copy(tmp_path, "solved", repo, reference, hidden)
    done = _run(oracle, solved, timeout)
    assert done.returncode == 0, f"the oracle fails on the reference:\n{_tail(done)}"
    done = _run(check, solved, timeout)
    assert done.returncode == 0, f"the visible check fails on the reference:\n{_tail(done)}"

    if kind == "rename":
        partial = task / "partial"
        assert _files(partial), "a rename task ships partial/, a half-done rename the oracle must refuse"
        half = _copy(tmp_path, "partial", repo, partial, hidden)
        done = _run(oracle, half, timeout)
        assert done.returncode != 0, f"the oracle passes a half-done rename:\n{_tail(done)}"
    if kind == "repro":
        tests = [f for f in _files(reference) if f.name.startswith("test_")]
        assert tests, "a repro reference ships the test it added"
        assert (hidden / "_original").is_dir(), "a repro task ships the original source under hidden/_original/"
        for rel in _files(hidden / "_original"):
            assert filecmp.cmp(hidden / "_original" / rel, repo / rel, shallow=False), f"_original/{rel} != repo/"
        for rel in _files(reference):
            if rel not in tests and (repo / rel).exists():
                assert (hidden / "_original" / rel).exists(), f"the reference changes {rel}: ship it in _original/"
        fix_only = _copy(tmp_path, "fix-only", repo, hidden)
        for rel in _files(reference):
            if rel not in tests:
                (fix_only / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(reference / rel, fix_only / rel)
        done = _run(oracle, fix_only, timeout)
        assert done.returncode != 0, f"the oracle passes a fix that adds no failing test:\n{_tail(done)}"
