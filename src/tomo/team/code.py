"""Code workers: a worker that runs a code engine on its task in its own git worktree of the job's workspace.

Why a worktree each: parallel implementers must never write the same files, and the next stage must see what each
one changed. The team makes (or, on resume, finds again) ``WORKSPACE/.tomo/worktrees/JOB-STAGE-WORKER`` on the
workspace's HEAD, runs the engine there, and hands the merge the worktree's diff and the engine's test verdict.

The engine sits behind :class:`CodeRunner`, a single async call, so the team does not depend on how it works:
:func:`default_runner` returns the oi engine's runner when ``tomo.oi.engine`` is installed, else None (a code worker
then fails with a clear error instead of pretending).
"""

from __future__ import annotations

import asyncio
import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from tomo.errors import ConfigError
from tomo.events import Sink
from tomo.models.base import Model
from tomo.models.messages import Usage

Verdict = Literal["passed", "failed", "unverified"]


@dataclass(frozen=True, slots=True)
class CodeResult:
    """What an engine reports: its summary, what it spent, and whether the tests it ran passed."""

    text: str
    usage: Usage
    verdict: Verdict


class CodeRunner(Protocol):
    async def __call__(self, task: str, worktree: Path, model: Model, sink: Sink) -> CodeResult: ...


def default_runner() -> CodeRunner | None:
    """The oi engine's runner, when this build has one."""
    try:
        engine = importlib.import_module("tomo.oi.engine")
    except ImportError:
        return None
    runner = getattr(engine, "team_runner", None)
    return runner() if callable(runner) else None


async def _git(cwd: Path, *args: str) -> str:
    process = await asyncio.create_subprocess_exec(
        "git", *args, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.DEVNULL)
    out, err = await process.communicate()
    if process.returncode != 0:
        raise ConfigError(f"git {' '.join(args)} failed in {cwd}: {err.decode(errors='replace').strip()}",
                          hint="a code worker needs the job's workspace to be a git repository with a commit")
    return out.decode(errors="replace")


async def worktree_for(workspace: Path, key: str) -> Path:
    """The worker's worktree (made on the workspace's HEAD the first time; the same one on a resume)."""
    path = workspace / ".tomo" / "worktrees" / key.replace("/", "-")
    if (path / ".git").exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    await _git(workspace, "worktree", "add", "--detach", str(path), "HEAD")
    return path


async def diff_of(worktree: Path) -> str:
    """Everything the worker changed against the commit its worktree started from, new files included."""
    await _git(worktree, "add", "--all")
    return await _git(worktree, "diff", "--cached", "HEAD")


def report(result: CodeResult, diff: str, worktree: Path) -> str:
    """The worker's output as the merge sees it: the engine's summary, its verdict, and the diff."""
    shown = diff.strip() or "(no changes)"
    return (f"{result.text.strip()}\n\nworktree: {worktree}\ntest verdict: {result.verdict}\n\n"
            f"```diff\n{shown}\n```")
