"""The team's job store: jobs, their stages and their workers, in the one schema that ``tomo serve`` reads too.

Why a module of its own: the team engine writes here (a checkpoint is one transaction per finished worker and one
per finished stage) and the console only reads, through :meth:`JobStore.list_jobs` and :meth:`JobStore.get_job`, so
the read side is plain frozen dataclasses that know nothing of SQLAlchemy. Timestamps are stored in UTC and come back
timezone-aware whatever the database keeps (SQLite drops the zone; it is put back on read).

Open a store with ``JobStore(tomo.store.db.connect(url))``; a workspace's default URL is
``tomo.store.db.default_url(workspace, "team.sqlite")`` (``WORKSPACE/.tomo/team.sqlite`` unless ``TOMO_DB`` names a
shared store).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    DateTime,
    Float,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
    select,
    update,
)
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError

JobStatus = Literal["running", "complete", "incomplete", "failed"]
# pending: not started · running: started, no checkpoint yet · complete: checkpointed · failed: ended in an error ·
# skipped: never started because the job stopped first (budget spent) · incomplete (stages only): stopped by the
# budget with some of its workers unfinished
StepStatus = Literal["pending", "running", "complete", "failed", "skipped", "incomplete"]

JOB_STATUSES: tuple[str, ...] = ("running", "complete", "incomplete", "failed")
STEP_STATUSES: tuple[str, ...] = ("pending", "running", "complete", "failed", "skipped", "incomplete")

metadata = MetaData()

jobs = Table(
    "team_jobs",
    metadata,
    Column("job_id", String(200), primary_key=True),
    Column("workspace", Text, nullable=False),
    Column("request", Text, nullable=False),
    Column("status", String(20), nullable=False),
    Column("reason", Text, nullable=False, default=""),
    Column("budget", BigInteger, nullable=True),
    Column("input_tokens", BigInteger, nullable=False, default=0),
    Column("output_tokens", BigInteger, nullable=False, default=0),
    Column("backend", String(20), nullable=False, default="local"),
    # how many times a backend started the job's run (the DBOS backend names each run's workflow after it)
    Column("runs", Integer, nullable=False, default=0),
    # what resume needs to rebuild the graph: stages, workers (role, model, prompt, max_tokens, agent, kind)
    Column("graph", JSON, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)
Index("team_jobs_created", jobs.c.created_at)
Index("team_jobs_workspace", jobs.c.workspace)

stages = Table(
    "team_stages",
    metadata,
    Column("job_id", String(200), primary_key=True),
    Column("idx", Integer, primary_key=True),
    Column("name", String(200), nullable=False),
    Column("status", String(20), nullable=False, default="pending"),
    Column("input", Text, nullable=True),
    Column("output", Text, nullable=True),
    Column("started_at", DateTime(timezone=True), nullable=True),
    Column("ended_at", DateTime(timezone=True), nullable=True),
    ForeignKeyConstraint(["job_id"], ["team_jobs.job_id"], ondelete="CASCADE"),
)

workers = Table(
    "team_workers",
    metadata,
    Column("job_id", String(200), primary_key=True),
    Column("stage_idx", Integer, primary_key=True),
    Column("idx", Integer, primary_key=True),
    Column("role", String(200), nullable=False),
    Column("model", Text, nullable=False, default=""),
    Column("status", String(20), nullable=False, default="pending"),
    Column("output", Text, nullable=True),
    Column("input_tokens", BigInteger, nullable=False, default=0),
    Column("output_tokens", BigInteger, nullable=False, default=0),
    Column("started_at", DateTime(timezone=True), nullable=True),
    Column("ended_at", DateTime(timezone=True), nullable=True),
    Column("error", Text, nullable=True),
    # "JOB/STAGE/WORKER": the same for every attempt at this worker, so a tool can tell a repeat from a first run
    Column("idempotency_key", String(300), nullable=False),
    Column("attempts", Integer, nullable=False, default=0),
    # which process ran the last attempt (the DBOS executor id; empty on the local backend)
    Column("executor", String(200), nullable=False, default=""),
    UniqueConstraint("idempotency_key", name="team_workers_key"),
    ForeignKeyConstraint(["job_id", "stage_idx"], ["team_stages.job_id", "team_stages.idx"], ondelete="CASCADE"),
)

# processes serving the DBOS backend: a live one heartbeats; the others take over the work of a silent or dead one
executors = Table(
    "team_executors",
    metadata,
    Column("executor_id", String(200), primary_key=True),
    Column("host", String(200), nullable=False),
    Column("pid", Integer, nullable=False),
    Column("seen_at", Float, nullable=False),
)


@dataclass(frozen=True, slots=True)
class ExecutorRow:
    executor_id: str
    host: str
    pid: int
    seen_at: float


def idempotency_key(job_id: str, stage: int, worker: int) -> str:
    """The key of one worker of one job: stable across attempts and processes."""
    return f"{job_id}/{stage}/{worker}"


def now() -> datetime:
    return datetime.now(UTC)


def _aware(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


# ---- the read side: what the console codes against ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WorkerRecord:
    index: int
    role: str
    model: str
    status: str
    output: str | None
    input_tokens: int
    output_tokens: int
    started_at: datetime | None
    ended_at: datetime | None
    error: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "role": self.role, "model": self.model, "status": self.status,
                "output": self.output, "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "started_at": _iso(self.started_at), "ended_at": _iso(self.ended_at), "error": self.error}


@dataclass(frozen=True, slots=True)
class StageRecord:
    index: int
    name: str
    status: str
    output: str | None
    started_at: datetime | None
    ended_at: datetime | None
    workers: list[WorkerRecord] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "name": self.name, "status": self.status, "output": self.output,
                "started_at": _iso(self.started_at), "ended_at": _iso(self.ended_at),
                "workers": [w.to_dict() for w in self.workers]}


@dataclass(frozen=True, slots=True)
class JobRecord:
    job_id: str
    workspace: str
    request: str
    status: str
    reason: str
    budget: int | None
    input_tokens: int
    output_tokens: int
    created_at: datetime
    updated_at: datetime
    stages: list[StageRecord] = field(default_factory=list)

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def to_dict(self) -> dict[str, Any]:
        return {"job_id": self.job_id, "workspace": self.workspace, "request": self.request, "status": self.status,
                "reason": self.reason, "budget": self.budget, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "created_at": _iso(self.created_at),
                "updated_at": _iso(self.updated_at), "stages": [s.to_dict() for s in self.stages]}


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


# ---- the write side: what the team engine calls -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NewWorker:
    """One worker as the graph declares it, for :meth:`JobStore.create_job`."""

    role: str
    model: str


@dataclass(frozen=True, slots=True)
class NewStage:
    name: str
    workers: Sequence[NewWorker]


class JobStore:
    """Reads and writes jobs in one SQLAlchemy engine. Every write is one transaction; readers never see half a
    checkpoint (SQLite in WAL mode lets the console read while a job writes)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def create_schema(self) -> None:
        """Creates the tables that are missing (idempotent; safe when several processes start at once: the loser of
        a race to create a table sees it on the next look)."""
        for attempt in range(5):
            try:
                metadata.create_all(self.engine, checkfirst=True)
                return
            except DBAPIError:
                if attempt == 4:
                    raise
                time.sleep(0.05 * (attempt + 1))

    # -- reads --

    def list_jobs(self, workspaces: Sequence[str] | None = None) -> list[JobRecord]:
        """Every job (or those of ``workspaces``, absolute paths), newest first, with their stages and workers."""
        query = select(jobs).order_by(jobs.c.created_at.desc(), jobs.c.job_id)
        if workspaces is not None:
            if not workspaces:
                return []
            query = query.where(jobs.c.workspace.in_(list(workspaces)))
        with self.engine.connect() as conn:
            job_rows = conn.execute(query).mappings().all()
            if not job_rows:
                return []
            ids = [row["job_id"] for row in job_rows]
            stage_rows = conn.execute(select(stages).where(stages.c.job_id.in_(ids))).mappings().all()
            worker_rows = conn.execute(select(workers).where(workers.c.job_id.in_(ids))).mappings().all()
        return _assemble(job_rows, stage_rows, worker_rows)

    def get_job(self, job_id: str) -> JobRecord | None:
        """The job with its stages and workers, or None when the store holds no such id."""
        with self.engine.connect() as conn:
            row = conn.execute(select(jobs).where(jobs.c.job_id == job_id)).mappings().first()
            if row is None:
                return None
            stage_rows = conn.execute(select(stages).where(stages.c.job_id == job_id)).mappings().all()
            worker_rows = conn.execute(select(workers).where(workers.c.job_id == job_id)).mappings().all()
        return _assemble([row], stage_rows, worker_rows)[0]

    def job_ids(self) -> list[str]:
        with self.engine.connect() as conn:
            return [r[0] for r in conn.execute(select(jobs.c.job_id).order_by(jobs.c.created_at.desc()))]

    def graph_of(self, job_id: str) -> dict[str, Any] | None:
        """The graph a job was created with (what resume rebuilds it from), or None for an unknown id."""
        with self.engine.connect() as conn:
            row = conn.execute(select(jobs.c.graph).where(jobs.c.job_id == job_id)).first()
        if row is None:
            return None
        graph = row[0]
        return json.loads(graph) if isinstance(graph, str) else dict(graph)

    # -- writes --

    def create_job(self, job_id: str, *, workspace: str, request: str, budget: int | None,
                   graph: Mapping[str, Any], stages_: Sequence[NewStage], backend: str = "local") -> None:
        """Inserts the job with every stage and worker pending, in one transaction (a job is whole or absent)."""
        stamp = now()
        with self.engine.begin() as conn:
            conn.execute(jobs.insert().values(
                job_id=job_id, workspace=workspace, request=request, status="running", reason="", budget=budget,
                input_tokens=0, output_tokens=0, backend=backend, runs=0, graph=dict(graph), created_at=stamp,
                updated_at=stamp))
            if stages_:
                conn.execute(stages.insert(), [
                    {"job_id": job_id, "idx": i, "name": s.name, "status": "pending"} for i, s in enumerate(stages_)])
            rows = [{"job_id": job_id, "stage_idx": i, "idx": j, "role": w.role, "model": w.model,
                     "status": "pending", "input_tokens": 0, "output_tokens": 0,
                     "idempotency_key": idempotency_key(job_id, i, j), "attempts": 0}
                    for i, s in enumerate(stages_) for j, w in enumerate(s.workers)]
            if rows:
                conn.execute(workers.insert(), rows)

    def stage_started(self, job_id: str, stage: int, stage_input: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(stages).where(stages.c.job_id == job_id, stages.c.idx == stage,
                                              stages.c.status != "complete")
                         .values(status="running", input=stage_input,
                                 started_at=func.coalesce(stages.c.started_at, now())))
            _touch(conn, job_id, status="running", reason="")

    def worker_started(self, job_id: str, stage: int, worker: int, model: str, executor: str = "") -> int:
        """Marks an attempt (not a checkpoint: a crash after this runs the worker again, under the same key).
        Returns the attempt's number (1 on a first run)."""
        with self.engine.begin() as conn:
            conn.execute(update(workers).where(*_worker(job_id, stage, worker), workers.c.status != "complete")
                         .values(status="running", model=model, started_at=now(), ended_at=None, error=None,
                                 attempts=workers.c.attempts + 1, executor=executor))
            attempts = conn.execute(select(workers.c.attempts).where(*_worker(job_id, stage, worker))).scalar()
        return int(attempts or 0)

    def worker_model(self, job_id: str, stage: int, worker: int) -> str:
        """The model spec recorded for the worker ("" when none was)."""
        with self.engine.connect() as conn:
            return str(conn.execute(select(workers.c.model).where(*_worker(job_id, stage, worker))).scalar() or "")

    def tokens_spent(self, job_id: str) -> int:
        """Input+output tokens of every checkpointed worker of the job (what the budget is measured against)."""
        with self.engine.connect() as conn:
            row = conn.execute(select(jobs.c.input_tokens, jobs.c.output_tokens).where(jobs.c.job_id == job_id)).first()
        return 0 if row is None else int(row[0] or 0) + int(row[1] or 0)

    def next_run(self, job_id: str) -> int:
        """Counts one more run of the job and returns its number (1 for the first)."""
        with self.engine.begin() as conn:
            conn.execute(update(jobs).where(jobs.c.job_id == job_id).values(runs=jobs.c.runs + 1))
            return int(conn.execute(select(jobs.c.runs).where(jobs.c.job_id == job_id)).scalar() or 0)

    def worker_runs(self, job_id: str) -> dict[tuple[int, int], tuple[int, str]]:
        """``{(stage, worker): (attempts, executor)}``: how often each worker was started, and by which process."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(workers.c.stage_idx, workers.c.idx, workers.c.attempts, workers.c.executor)
                                .where(workers.c.job_id == job_id)).all()
        return {(r[0], r[1]): (int(r[2]), r[3] or "") for r in rows}

    def heartbeat(self, executor_id: str, host: str, pid: int) -> None:
        with self.engine.begin() as conn:
            done = conn.execute(update(executors).where(executors.c.executor_id == executor_id)
                                .values(seen_at=time.time(), host=host, pid=pid))
            if done.rowcount == 0:
                conn.execute(executors.insert().values(executor_id=executor_id, host=host, pid=pid,
                                                       seen_at=time.time()))

    def executors(self) -> list[ExecutorRow]:
        with self.engine.connect() as conn:
            return [ExecutorRow(r[0], r[1], int(r[2]), float(r[3])) for r in conn.execute(select(
                executors.c.executor_id, executors.c.host, executors.c.pid, executors.c.seen_at))]

    def forget_executor(self, executor_id: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(executors.delete().where(executors.c.executor_id == executor_id))

    def set_budget(self, job_id: str, budget: int | None) -> None:
        with self.engine.begin() as conn:
            _touch(conn, job_id, budget=budget)

    def job_resumed(self, job_id: str) -> None:
        """The job runs again: status running, the previous stop's reason cleared."""
        with self.engine.begin() as conn:
            _touch(conn, job_id, status="running", reason="")

    def worker_finished(self, job_id: str, stage: int, worker: int, *, status: str, output: str | None,
                        input_tokens: int, output_tokens: int, error: str | None = None) -> bool:
        """The worker's checkpoint: its row and the job's token totals in ONE transaction. Returns False (and writes
        nothing) when the worker was already complete, so a repeat never counts its tokens twice."""
        if status not in ("complete", "failed"):
            raise ValueError(f"a finished worker is complete or failed, not {status!r}")
        with self.engine.begin() as conn:
            done = conn.execute(update(workers)
                                .where(*_worker(job_id, stage, worker), workers.c.status != "complete")
                                .values(status=status, output=output, input_tokens=workers.c.input_tokens
                                        + input_tokens, output_tokens=workers.c.output_tokens + output_tokens,
                                        ended_at=now(), error=error))
            if done.rowcount == 0:
                return False
            conn.execute(update(jobs).where(jobs.c.job_id == job_id).values(
                input_tokens=jobs.c.input_tokens + input_tokens, output_tokens=jobs.c.output_tokens + output_tokens,
                updated_at=now()))
        return True

    def workers_skipped(self, job_id: str, stage: int, indexes: Sequence[int], reason: str) -> None:
        if not indexes:
            return
        with self.engine.begin() as conn:
            conn.execute(update(workers).where(workers.c.job_id == job_id, workers.c.stage_idx == stage,
                                               workers.c.idx.in_(list(indexes)), workers.c.status != "complete")
                         .values(status="skipped", error=reason))

    def stage_finished(self, job_id: str, stage: int, *, status: str, output: str | None) -> None:
        """The stage's checkpoint: its status and merged output (the next stage's input) in one transaction."""
        with self.engine.begin() as conn:
            conn.execute(update(stages).where(stages.c.job_id == job_id, stages.c.idx == stage)
                         .values(status=status, output=output, ended_at=now()))
            _touch(conn, job_id)

    def job_finished(self, job_id: str, *, status: JobStatus, reason: str = "") -> None:
        if status not in JOB_STATUSES:
            raise ValueError(f"unknown job status {status!r}")
        with self.engine.begin() as conn:
            _touch(conn, job_id, status=status, reason=reason)


def _worker(job_id: str, stage: int, worker: int) -> tuple[Any, ...]:
    return (workers.c.job_id == job_id, workers.c.stage_idx == stage, workers.c.idx == worker)


def _touch(conn: Connection, job_id: str, **values: Any) -> None:
    conn.execute(update(jobs).where(jobs.c.job_id == job_id).values(updated_at=now(), **values))


def _assemble(job_rows: Sequence[Any], stage_rows: Sequence[Any],
              worker_rows: Sequence[Any]) -> list[JobRecord]:
    by_stage: dict[tuple[str, int], list[WorkerRecord]] = {}
    for w in sorted(worker_rows, key=lambda r: (r["job_id"], r["stage_idx"], r["idx"])):
        by_stage.setdefault((w["job_id"], w["stage_idx"]), []).append(WorkerRecord(
            index=w["idx"], role=w["role"], model=w["model"] or "", status=w["status"], output=w["output"],
            input_tokens=int(w["input_tokens"] or 0), output_tokens=int(w["output_tokens"] or 0),
            started_at=_aware(w["started_at"]), ended_at=_aware(w["ended_at"]), error=w["error"]))
    by_job: dict[str, list[StageRecord]] = {}
    for s in sorted(stage_rows, key=lambda r: (r["job_id"], r["idx"])):
        by_job.setdefault(s["job_id"], []).append(StageRecord(
            index=s["idx"], name=s["name"], status=s["status"], output=s["output"],
            started_at=_aware(s["started_at"]), ended_at=_aware(s["ended_at"]),
            workers=by_stage.get((s["job_id"], s["idx"]), [])))
    records = []
    for j in job_rows:
        created, updated = _aware(j["created_at"]), _aware(j["updated_at"])
        assert created is not None and updated is not None  # NOT NULL columns
        records.append(JobRecord(
            job_id=j["job_id"], workspace=j["workspace"], request=j["request"], status=j["status"],
            reason=j["reason"] or "", budget=j["budget"], input_tokens=int(j["input_tokens"] or 0),
            output_tokens=int(j["output_tokens"] or 0), created_at=created, updated_at=updated,
            stages=by_job.get(j["job_id"], [])))
    return records
