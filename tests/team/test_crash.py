"""Crash safety: a real child process running a job is SIGKILLed at random points, again and again.

Kill points: at a random instant (mostly inside a worker's model call), right after a model replied and before its
worker's checkpoint, and inside the transaction of a stage's or a worker's checkpoint (after its SQL ran, before
COMMIT). After every kill the store must open and pass SQLite's integrity check with consistent totals; in the end
every job resumes to completion, and no worker that had a checkpoint is ever called again (each model call appends
its worker's key to a file: the count is the proof).

The children are forked from the test process (cheap: tomo is already imported), each opens its own engine and
runs ``Team.resume`` on the real store. The stores live in /dev/shm when it exists: a SIGKILL ends the process, not
the machine, so the page cache survives it either way, and the test spends its time on kills rather than fsyncs
(power loss is what synchronous FULL is for; no test here pulls the plug).
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import signal
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from sqlalchemy import event, text
from team_support import open_store, reply, script

from tomo.config import Settings
from tomo.models.base import Model
from tomo.models.gateway import model_from_spec
from tomo.models.messages import Message, Reply, ToolSpec
from tomo.store.db import connect
from tomo.store.jobs import JobStore
from tomo.team import ModelChooser, TaskGraph, Team, idempotency_key, parse_stages

STAGES = "plan:planner | build:implementer,tester,researcher | review:reviewer"
KILLS_WANTED = 50


class CountingModel:
    """Wraps a scripted model: every answered call appends its worker's key to a file (O_APPEND, one write), and
    the ``die_after`` call of this process kills it right after the reply, before the worker's checkpoint."""

    calls_in_process = 0

    def __init__(self, inner: Model, log: Path, die_after: int | None) -> None:
        self.inner, self.name, self.log, self.die_after = inner, inner.name, log, die_after

    async def chat(self, messages: Sequence[Message], tools: Sequence[ToolSpec] = (), *, force_tools: bool = False,
                   max_tokens: int | None = None) -> Reply:
        answer = await self.inner.chat(messages, tools, force_tools=force_tools, max_tokens=max_tokens)
        fd = os.open(self.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        os.write(fd, f"{idempotency_key()}\n".encode())
        os.close(fd)
        CountingModel.calls_in_process += 1
        if self.die_after is not None and CountingModel.calls_in_process == self.die_after:
            os.kill(os.getpid(), signal.SIGKILL)
        return answer

    def stream(self, *args: object, **kwargs: object) -> object:  # pragma: no cover - the team does not stream
        raise NotImplementedError


def _child(folder: Path, roles: dict[str, str], plan: tuple[str, int]) -> None:
    """Runs in the forked process: resume the job until it ends or the plan kills it. Never returns."""
    try:
        kind, n = plan
        store = JobStore(connect(f"sqlite:///{folder / 'team.sqlite'}"))
        log = folder / "calls.log"

        def factory(spec: str, settings: Settings) -> Model:
            return CountingModel(model_from_spec(spec, settings), log, n if kind == "reply" else None)  # type: ignore[return-value]

        if kind in ("stage_commit", "worker_commit"):
            target = "stage_finished" if kind == "stage_commit" else "worker_finished"
            armed = {"n": 0, "inside": False}
            original = getattr(store, target)

            def wrapped(*args: object, **kwargs: object) -> object:
                armed["inside"] = True
                try:
                    return original(*args, **kwargs)
                finally:
                    armed["inside"] = False

            setattr(store, target, wrapped)

            @event.listens_for(store.engine, "commit")
            def _die(_conn: object) -> None:  # fires after the SQL ran, before the database commits
                if armed["inside"]:
                    armed["n"] += 1
                    if armed["n"] == n:
                        os.kill(os.getpid(), signal.SIGKILL)

        chooser = ModelChooser(Settings(), primary=roles["planner"], roles=roles, factory=factory)
        team = Team(store, chooser, workspace=folder)
        result = asyncio.run(team.resume("crash"))
        os._exit(0 if result.status == "complete" else 3)
    except BaseException:  # pragma: no cover - the parent sees the exit code
        import traceback

        traceback.print_exc()
        os._exit(4)


def _run_child(folder: Path, roles: dict[str, str], plan: tuple[str, int], timer: float | None) -> int:
    """Forks a child and returns its wait status; with ``timer`` the parent SIGKILLs it after that many seconds."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        _child(folder, roles, plan)
    if timer is not None:
        deadline = time.monotonic() + timer
        while time.monotonic() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return status
            time.sleep(0.002)
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    return status


def _check_store(folder: Path) -> tuple[set[str], Counter[str]]:
    """The store opens, passes the integrity check and is consistent; returns the checkpointed workers' keys and
    the model calls counted so far."""
    engine = connect(f"sqlite:///{folder / 'team.sqlite'}")
    try:
        with engine.connect() as conn:
            assert conn.execute(text("PRAGMA integrity_check")).scalar() == "ok"
        store = JobStore(engine)
        (job,) = store.list_jobs()
        workers = [w for s in job.stages for w in s.workers]
        assert job.input_tokens == sum(w.input_tokens for w in workers)  # a checkpoint is all or nothing
        assert job.output_tokens == sum(w.output_tokens for w in workers)
        for stage in job.stages:
            if stage.status == "complete":
                assert stage.output and all(w.status == "complete" for w in stage.workers)
        done = {f"crash/{s.index}/{w.index}" for s in job.stages for w in s.workers if w.status == "complete"}
        for s in job.stages:
            for w in s.workers:
                if w.status == "complete":
                    assert w.output and w.ended_at is not None
    finally:
        engine.dispose()
    log = folder / "calls.log"
    calls = Counter(log.read_text().split()) if log.exists() else Counter()
    return done, calls


@pytest.fixture
def base(tmp_path: Path) -> Iterator[Path]:
    if not Path("/dev/shm").is_dir():
        yield tmp_path
        return
    folder = Path(tempfile.mkdtemp(prefix="tomo-team-crash-", dir="/dev/shm"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_job_killed_at_random_points_always_resumes_without_calling_a_finished_worker_again(
        base: Path) -> None:
    tmp_path = base
    rng = random.Random(int(os.environ.get("TOMO_CRASH_SEED", "20261201")))
    kills = Counter[str]()
    jobs = 0
    while sum(kills.values()) < KILLS_WANTED:
        jobs += 1
        folder = tmp_path / f"job{jobs}"
        folder.mkdir()
        roles = {role: script(folder, role, reply(f"{role} output", tokens=(7, 3), delay=rng.uniform(0.0, 0.02)))
                 for role in ("planner", "implementer", "tester", "researcher", "reviewer")}
        store = open_store(folder / "team.sqlite")
        chooser = ModelChooser(Settings(), primary=roles["planner"], roles=roles)
        Team(store, chooser, workspace=folder).create(TaskGraph("crash", parse_stages(STAGES)), "survive")
        store.engine.dispose()
        snapshots: list[tuple[set[str], Counter[str]]] = []
        for _attempt in range(6):
            kind = rng.choice(["timer", "reply", "stage_commit", "worker_commit"])
            plan = (kind, rng.randint(1, 3))
            timer = rng.uniform(0.0, 0.08) if kind == "timer" else None
            status = _run_child(folder, roles, plan, timer)
            killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
            assert killed or os.waitstatus_to_exitcode(status) == 0, f"child ended with status {status} ({plan})"
            snapshots.append(_check_store(folder))
            if not killed:
                break
            kills[kind] += 1
        status = _run_child(folder, roles, ("none", 0), None)
        assert os.waitstatus_to_exitcode(status) == 0, f"the final resume of job {jobs} ended with status {status}"
        done, calls = _check_store(folder)
        assert len(done) == 5
        for finished, counted in snapshots:
            for key in finished:
                assert calls[key] == counted[key], f"{key} was called again after its checkpoint (job {jobs})"
        assert all(calls[key] >= 1 for key in done)
        store = open_store(folder / "team.sqlite")
        job = store.get_job("crash")
        store.engine.dispose()
        assert job is not None and job.status == "complete" and job.total_tokens == 50
    assert sum(kills.values()) >= KILLS_WANTED
    assert all(kills[k] > 0 for k in ("timer", "reply", "stage_commit", "worker_commit")), kills
