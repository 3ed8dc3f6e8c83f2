"""Code workers: a worker that runs a code engine on its task in its own git worktree of the job's workspace.

Why a worktree each: parallel implementers must never write the same files, and the next stage must see what each
one changed. The team makes (or, on resume, finds again) ``WORKSPACE/.tomo/worktrees/JOB-STAGE-WORKER`` on the
workspace's HEAD, runs the engine there, and hands the merge the worktree's diff and the engine's test verdict.

The engine sits behind :class:`CodeRunner` (an async call, and how to seed a new worktree), so the team does not
depend on how it works, nor import it: engines sit side by side in the house, and the layer above them (the cli's
``tomo team``, :class:`tomo.cli.team_oi.OiRunner`) hands the team the oi engine. A team given no engine fails a code
worker with a clear error instead of pretending.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from tomo.errors import ConfigError, TomoError
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
    async def __call__(self, task: str, worktree: Path, model: Model, sink: Sink) -> CodeResult:
        """Run the engine on ``task`` in ``worktree`` (the worker's own checkout) with ``model``."""
        ...

    def seed(self, worktree: Path, workspace: Path) -> None:
        """Give a new ``worktree`` what the engine indexes of ``workspace`` (its first step is then cheap). Called once
        per new worktree, one at a time; a failure (TomoError, OSError, sqlite3.Error) is ignored: a help only."""
        ...


async def _git(cwd: Path, *args: str) -> str:
    process = await asyncio.create_subprocess_exec(
        "git", *args, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.DEVNULL)
    out, err = await process.communicate()
    if process.returncode != 0:
        raise ConfigError(f"git {' '.join(args)} failed in {cwd}: {err.decode(errors='replace').strip()}",
                          hint="a code worker needs the job's workspace to be a git repository with a commit")
    return out.decode(errors="replace")


async def worktree_for(workspace: Path, key: str, runner: CodeRunner) -> Path:
    """The worker's worktree (made on the workspace's HEAD the first time and seeded by ``runner``; the same one on a
    resume)."""
    path = workspace / ".tomo" / "worktrees" / key.replace("/", "-")
    if (path / ".git").exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    await _git(workspace, "worktree", "add", "--detach", str(path), "HEAD")
    await asyncio.to_thread(_seed_indexes, runner, path, workspace)
    return path


_seeding = threading.Lock()  # parallel workers of one job: the workspace's indexes are built once, not per worker


def _seed_indexes(runner: CodeRunner, worktree: Path, workspace: Path) -> None:
    """The oi engine's first step is a context pack, which indexes the whole repository: on Django about six seconds
    and more, for each worker of each stage. A new worktree starts from the workspace's indexes instead (the runner
    builds or refreshes them first), so it parses only what differs from them. A help, never a reason to fail the
    worker."""
    with _seeding, contextlib.suppress(TomoError, OSError, sqlite3.Error):
        runner.seed(worktree, workspace)


async def diff_of(worktree: Path) -> str:
    """Everything the worker changed against the commit its worktree started from, new files included (tomo's own
    ``.tomo/`` state left out)."""
    await _git(worktree, "add", "--all", "--", ".", ":(exclude).tomo")
    return await _git(worktree, "diff", "--cached", "HEAD", "--", ".", ":(exclude).tomo")


def report(result: CodeResult, diff: str, worktree: Path) -> str:
    """The worker's output as the merge sees it: the engine's summary, its verdict, and the diff."""
    shown = diff.strip() or "(no changes)"
    return (f"{result.text.strip()}\n\nworktree: {worktree}\ntest verdict: {result.verdict}\n\n"
            f"```diff\n{shown}\n```")
