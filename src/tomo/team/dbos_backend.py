"""The DBOS backend: the same graph, run as a durable DBOS workflow whose workers are steps taken from queues.

Why DBOS (PyPI ``dbos``): it is a library, not a server. Its system database (SQLite on one machine, PostgreSQL when
several machines share the work) records every workflow and step, and its queues hand work to whichever process is
free, with concurrency limits per queue. tomo maps onto it directly:

- a job is the workflow ``tomo_team_job`` (enqueued on the ``tomo-team-jobs`` queue, so any process may drive it);
- each worker is the workflow ``tomo_team_worker`` with one step that runs :meth:`Team.run_worker`, enqueued on the
  queue of its model's provider (``tomo-team-ollama``, ``tomo-team-anthropic`` ...) whose global concurrency is
  ``[team.concurrency] PROVIDER = N`` (default 4);
- the checkpoints are tomo's own, in the job store, written by the same code as the local backend, so
  ``tomo team show`` and the console read the same rows whichever backend ran the job. A worker step first looks
  at the store and does nothing when its worker is already complete, so a step that DBOS runs again (its process
  died after the checkpoint but before DBOS recorded the step) never calls the model twice.

Taking over from a dead process: every serving process heartbeats into ``team_executors`` and, once a second,
recovers (DBOS re-enqueues) the pending workflows of an executor on this host whose process is gone, or of any
executor silent for longer than ``stale_after`` seconds.

DBOS is one instance per process; :func:`launch` configures it once and later calls reuse it.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tomo import __version__
from tomo.errors import ConfigError
from tomo.events import StageStarted
from tomo.store.executors import dead_executors
from tomo.store.jobs import JobStore
from tomo.team.graph import TaskGraph
from tomo.team.roles import provider_of
from tomo.team.runner import JobResult, Team, TeamError

try:
    from dbos import DBOS, DBOSClient, DBOSConfig, SetWorkflowID
except ImportError as exc:  # pragma: no cover - the extra is missing
    raise ConfigError("the DBOS backend needs the dbos package", hint="pip install 'tomo[dbos]' (or pip install dbos)"
                      ) from exc

JOBS_QUEUE = "tomo-team-jobs"
PROVIDERS = ("ollama", "anthropic", "openai", "openai-compat", "scripted")
DEFAULT_CONCURRENCY = 4
APP_NAME = "tomo-team"
POLL = 0.1  # seconds between looks at a workflow's result and at the queues: a worker takes seconds, not ms


def queue_name(provider: str) -> str:
    return f"tomo-team-{provider}"


@dataclass(slots=True)
class _Served:
    team: Team
    executor_id: str
    url: str
    stop: threading.Event
    janitor: threading.Thread | None = None


_served: _Served | None = None
_lock = threading.Lock()


def system_url(store_url: str, workspace: Path, explicit: str | None = None) -> str:
    """DBOS's own database: ``explicit``, else the job store's PostgreSQL server, else ``.tomo/dbos.sqlite``."""
    if explicit:
        return explicit
    if store_url.startswith(("postgresql", "postgres:")):
        return store_url
    folder = workspace.resolve() / ".tomo"
    folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{folder / 'dbos.sqlite'}"


def _queue(name: str) -> Any:
    queue = DBOS.retrieve_queue(name)
    if queue is None:
        raise TeamError(f"the DBOS queue {name!r} is not registered", hint="launch() registers tomo's queues")
    return queue


def _team() -> Team:
    if _served is None:
        raise TeamError("the DBOS backend is not launched in this process", hint="call dbos_backend.launch(team)")
    return _served.team


# ---- the workflows ----------------------------------------------------------------------------------------------


@DBOS.step(name="tomo_team_plan_stage")
def _plan_stage(job_id: str, index: int) -> list[tuple[int, str]]:
    """Marks the stage started and returns its unfinished workers with their providers (or [] when complete)."""
    team = _team()
    record = team.store.get_job(job_id)
    if record is None:
        raise TeamError(f"no job with id {job_id!r} in the store", hint="`tomo team list` shows the jobs")
    stage = record.stages[index]
    if stage.status == "complete":
        return []
    team.store.stage_started(job_id, index, team.stage_input(record, index))
    todo = [w for w in stage.workers if w.status != "complete"]
    team.sink.emit(StageStarted(job_id, stage.name, index, len(todo)))
    return [(w.index, provider_of(w.model) if w.model else "ollama") for w in stage.workers if w.status != "complete"]


@DBOS.step(name="tomo_team_finish_stage")
def _finish_stage(job_id: str, index: int) -> tuple[str, str] | None:
    team = _team()
    record = team.store.get_job(job_id)
    if record is not None and record.stages[index].status == "complete":
        return None
    return team.finish_stage(team.load(job_id), index)


@DBOS.step(name="tomo_team_end")
def _end(job_id: str, status: str, reason: str) -> str:
    team = _team()
    team.end(job_id, status, reason)  # type: ignore[arg-type]
    return status


@DBOS.step(name="tomo_team_start")
def _start(job_id: str) -> int:
    team = _team()
    team.store.job_resumed(job_id)
    record = team.store.get_job(job_id)
    return len(record.stages) if record else 0


@DBOS.workflow(name="tomo_team_job")
def job_workflow(job_id: str) -> str:
    """One job: stages in order; each stage's workers enqueued on their provider's queue and awaited."""
    stages = _start(job_id)
    for index in range(stages):
        todo = _plan_stage(job_id, index)
        handles = [_queue(queue_name(provider)).enqueue(worker_workflow, job_id, index, worker)
                   for worker, provider in todo]
        for handle in handles:
            handle.get_result(polling_interval_sec=POLL)
        verdict = _finish_stage(job_id, index)
        if verdict is not None:
            return _end(job_id, verdict[0], verdict[1])
    return _end(job_id, "complete", "")


@DBOS.step(name="tomo_team_run_worker", retries_allowed=False)
def _run_worker(job_id: str, stage: int, worker: int) -> str:
    team = _team()
    record = team.store.get_job(job_id)
    if record is None:
        raise TeamError(f"no job with id {job_id!r} in the store", hint="`tomo team list` shows the jobs")
    if record.stages[stage].workers[worker].status == "complete":
        return "complete"  # checkpointed before DBOS recorded this step: never call the model again
    graph = team.load(job_id)
    status = asyncio.run(team.run_worker(graph, stage, worker, record.request, team.stage_input(record, stage),
                                         executor=_served.executor_id if _served else ""))
    return str(status)


@DBOS.workflow(name="tomo_team_worker")
def worker_workflow(job_id: str, stage: int, worker: int) -> str:
    return _run_worker(job_id, stage, worker)


# ---- serving ------------------------------------------------------------------------------------------------------


def launch(team: Team, url: str, *, concurrency: Mapping[str, int] | None = None, stale_after: float = 10.0,
           polling_interval: float = POLL, worker_concurrency: int | None = None) -> str:
    """Starts DBOS in this process (once) on system database ``url``, serving every tomo queue; returns the
    executor id. Later calls only swap the team (same store) and reuse the running instance."""
    global _served
    with _lock:
        if _served is not None:
            if _served.url != url:
                raise TeamError(f"DBOS already runs in this process on {_served.url}",
                                hint="one process serves one DBOS system database")
            _served.team = team
            return _served.executor_id
        executor_id = f"tomo-{socket.gethostname()}-{os.getpid()}"
        config: DBOSConfig = {"name": APP_NAME, "system_database_url": url, "executor_id": executor_id,
                              "application_version": f"tomo-{__version__}", "log_level": "WARNING",
                              "notification_listener_polling_interval_sec": 0.1}
        served = _Served(team, executor_id, url, threading.Event())
        _served = served  # before launch: DBOS may start recovered or queued work at once
        try:
            DBOS(config=config)
            DBOS.launch()
            limits = dict(concurrency or {})
            DBOS.register_queue(JOBS_QUEUE, polling_interval_sec=polling_interval, on_conflict="always_update")
            for provider in PROVIDERS:
                DBOS.register_queue(queue_name(provider),
                                    global_concurrency=limits.get(provider, DEFAULT_CONCURRENCY),
                                    worker_concurrency=worker_concurrency or team.settings.worker_concurrency,
                                    polling_interval_sec=polling_interval, on_conflict="always_update")
            team.store.heartbeat(executor_id, socket.gethostname(), os.getpid())
        except BaseException:
            _served = None
            DBOS.destroy(destroy_registry=False)
            raise
        served.janitor = threading.Thread(target=_janitor, args=(served, stale_after), daemon=True,
                                          name="tomo-team-janitor")
        served.janitor.start()
        return executor_id


def shutdown() -> None:
    """Stops serving: the janitor, then DBOS, whose pending work another process takes over. The executor's
    heartbeat row stays on purpose (as the lab's does): the workers this process leaves pending are handed out
    again only by a janitor that finds the row dead (on this host at once, elsewhere after ``stale_after``), which
    then forgets it; forgetting it here stranded them (a worker process stopped by SIGTERM mid-job left the job
    running for ever)."""
    global _served
    with _lock:
        if _served is None:
            return
        _served.stop.set()
        DBOS.destroy(destroy_registry=False)
        _served = None


def _janitor(served: _Served, stale_after: float) -> None:
    host = socket.gethostname()
    while not served.stop.wait(1.0):
        store = served.team.store
        try:
            store.heartbeat(served.executor_id, host, os.getpid())
            rows = [(row.executor_id, row.host, row.pid, row.seen_at) for row in store.executors()]
            dead = dead_executors(rows, served.executor_id, host, stale_after)
            if dead:
                DBOS._recover_pending_workflows(dead)
                for executor_id in dead:
                    store.forget_executor(executor_id)
        except Exception as exc:  # keep serving: the next round tries again
            DBOS.logger.warning(f"tomo team janitor: {exc}")


def _wait(team: Team, job_id: str, handle: Any) -> JobResult:
    handle.get_result(polling_interval_sec=POLL)
    record = team.store.get_job(job_id)
    assert record is not None
    output = record.stages[-1].output if record.status == "complete" and record.stages else None
    return JobResult(job_id, record.status, record.reason, output, record)


def workflow_id(job_id: str, run: int) -> str:
    return f"tomo-team:{job_id}:{run}"


def _enqueue_job(team: Team, job_id: str) -> Any:
    run = team.store.next_run(job_id)
    with SetWorkflowID(workflow_id(job_id, run)):
        return _queue(JOBS_QUEUE).enqueue(job_workflow, job_id)


def run(team: Team, graph: TaskGraph, request: str, *, url: str | None = None) -> JobResult:
    """Creates the job, enqueues its workflow, serves the queues in this process and waits for the end."""
    team.create(graph, request)
    return _drive(team, graph.job_id, url)


def resume(team: Team, job_id: str, *, budget: int | None = None, url: str | None = None) -> JobResult:
    """Continues a job on DBOS: a complete job is a no-op; a job whose workflow still runs is waited for."""
    team.check_workspace(job_id)
    team.load(job_id, budget=budget)
    record = team.store.get_job(job_id)
    assert record is not None
    if record.status == "complete":
        return JobResult(job_id, "complete", record.reason, record.stages[-1].output, record, noop=True)
    return _drive(team, job_id, url)


def _drive(team: Team, job_id: str, url: str | None) -> JobResult:
    system = url or system_url(team.store.engine.url.render_as_string(hide_password=False), team.workspace)
    owned = _served is None  # a process that already serves (a benchmark, a long-lived host) keeps serving
    launch(team, system, concurrency=team.settings.concurrency)
    try:
        pending = DBOS.list_workflows(workflow_id_prefix=f"tomo-team:{job_id}:", name="tomo_team_job",
                                      status=["PENDING", "ENQUEUED"], load_input=False, load_output=False)
        handle = DBOS.retrieve_workflow(pending[-1].workflow_id) if pending else _enqueue_job(team, job_id)
        return _wait(team, job_id, handle)
    finally:
        if owned:
            shutdown()


def submit(system: str, job_id: str, store: JobStore) -> str:
    """Enqueues an existing job's workflow without serving (a client: the worker processes take it)."""
    client = DBOSClient(system_database_url=system)
    try:
        wid = workflow_id(job_id, store.next_run(job_id))
        client.enqueue({"queue_name": JOBS_QUEUE, "workflow_name": "tomo_team_job", "workflow_id": wid,
                        "app_version": f"tomo-{__version__}"}, job_id)
        return wid
    finally:
        client.destroy()
