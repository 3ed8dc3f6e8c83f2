"""Code workers: a worker that runs a code engine on its task in its own git worktree of the job's workspace.

Why a worktree each: parallel implementers must never write the same files, and the next stage must see what each
one changed. The team makes (or, on resume, finds again) ``WORKSPACE/.tomo/worktrees/JOB-STAGE-WORKER`` on the
workspace's HEAD, runs the engine there, and hands the merge the worktree's diff and the engine's test verdict.

The engine sits behind :class:`CodeRunner`, a single async call, so the team does not depend on how it works:
:func:`default_runner` returns :class:`OiRunner` (the oi engine) when ``tomo.oi.engine`` is in this build, else None
(a code worker then fails with a clear error instead of pretending).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from tomo.config import Settings
from tomo.errors import ConfigError, ModelError, TomoError
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


def default_runner(settings: Settings | None = None) -> CodeRunner | None:
    """The oi engine as a code runner, when this build has it (``tomo.oi.engine``); None otherwise."""
    try:
        importlib.import_module("tomo.oi.engine")
    except ImportError:
        return None
    return OiRunner(settings or Settings())


class OiRunner:
    """The oi engine on a worker's task: code is the model's only action, every block runs in the sandbox of
    ``[sandbox]`` in the worktree, no block needs approval (the worktree is the worker's own), and the exec gate is
    on, so a turn that changed code ends only after a check that ran the change came back green.

    The verdict: ``passed`` only when the engine's outcome is ``verified`` (a file changed and a green check executed
    the change; a turn that changed nothing never passes), ``failed`` when the last check after the change failed,
    ``unverified`` otherwise (nothing changed, no check ran, the rounds ran out).
    """

    def __init__(self, settings: Settings, *, max_rounds: int = 20, exec_gate: bool = True) -> None:
        self.settings = settings
        self.max_rounds = max_rounds
        self.exec_gate = exec_gate

    async def __call__(self, task: str, worktree: Path, model: Model, sink: Sink) -> CodeResult:
        from tomo.oi.approval import ApproveAll
        from tomo.oi.engine import Engine
        from tomo.sandbox import Limits, make_sandbox

        box = make_sandbox(None, self.settings.sandbox)
        engine = Engine(model, box, ApproveAll(), worktree, None, self.max_rounds, self.exec_gate, False,
                        limits=Limits.from_settings(self.settings.sandbox))
        messages = await engine.turn([], task, sink)
        summary = engine.last
        gate = summary.gates.get("exec")
        if summary.ended_by == "error":
            raise ModelError(f"the code engine's model failed: {summary.error}", hint="see the worker's error")
        if summary.verified:
            verdict: Verdict = "passed"
        elif gate is not None and gate.on and not gate.satisfied and "failed (exit" in gate.reason:
            verdict = "failed"
        else:
            verdict = "unverified"
        said = [m.content for m in messages if m.role == "assistant" and m.content.strip()]
        text = (said[-1] if said else "(the engine said nothing)") + (
            f"\n\nended by: {summary.ended_by} after {summary.rounds} round(s), {summary.blocks} block(s); "
            f"files changed: {', '.join(summary.files_changed) or 'none'}; exec gate: "
            f"{gate.reason if gate is not None else 'n/a'}; outcome: {summary.outcome} ({summary.reason})")
        return CodeResult(text, summary.usage, verdict)


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
    await asyncio.to_thread(_seed_indexes, path, workspace)
    return path


_seeding = threading.Lock()  # parallel workers of one job: the workspace's indexes are built once, not per worker


def _seed_indexes(worktree: Path, workspace: Path) -> None:
    """The code engine's first step is a context pack, which indexes the whole repository: on Django about six seconds
    and more, for each worker of each stage. A new worktree starts from the workspace's indexes instead (built or
    refreshed here first), so it parses only what differs from them. A help, never a reason to fail the worker."""
    try:
        from tomo.oi.context_pack import seed
    except ImportError:  # a build without the oi engine has no pack to warm
        return
    with _seeding, contextlib.suppress(TomoError, OSError, sqlite3.Error):
        seed(worktree, workspace)


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
