"""The distributed lab: a plan's runs spread over worker processes through a DBOS queue, as ``tomo team`` spreads
its workers (:mod:`tomo.team.dbos_backend`, whose launch, executor ids and janitor this mirrors).

Why DBOS: it is a library, not a server. Its system database records every workflow and step, and its queue hands
each run to whichever serving process is free. The system database is the records' own PostgreSQL database when
``--db`` is PostgreSQL (several machines), else an SQLite file beside the records file (several processes on one
machine: SQLite does not cross machines).

- one run is the workflow ``tomo_lab_run`` on the queue ``tomo-lab``, with one step that runs
  :func:`tomo.lab.runner.run_job` and records the verdict. The step first looks at the records and does nothing when
  its run is recorded already, so a step DBOS runs again (its process died after the record, before DBOS noted the
  step) never runs the model twice;
- a workflow's id is derived from the run's key (suite, task, variant, args, model, repeat), so enqueueing the same
  plan twice attaches to the runs already queued instead of queueing them again;
- the queue's per-process limit is 1 by default: a local model server answers one request at a time, and a second
  run in the same process would only wait for it (and count the wait in its wall time).

Taking over from a dead process: every serving process heartbeats into ``lab_executors`` (in the records database)
and, once a second, has DBOS re-enqueue the runs in hand of an executor on this host whose process is gone, or of
any executor silent for longer than ``stale_after`` seconds.

DBOS is one instance per process; :func:`launch` configures it once.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tomo import __version__
from tomo.errors import ConfigError
from tomo.lab.records import Key, LabStore, RunRecord
from tomo.lab.runner import Job, RunSettings, Variant, run_job, stop_all
from tomo.lab.suite import BUNDLED, Suite, load_suite
from tomo.store.executors import dead_executors

try:
    from dbos import DBOS, DBOSConfig, SetWorkflowID
except ImportError as exc:  # pragma: no cover - the extra is missing
    raise ConfigError("the distributed lab needs the dbos package",
                      hint="pip install 'tomo[dbos]' (or pip install dbos)") from exc

QUEUE = "tomo-lab"
APP_NAME = "tomo-lab"
WORKFLOW = "tomo_lab_run"
PREFIX = "tomo-lab:"
POLL = 0.5  # seconds between looks at the queue and the records: a run takes seconds to minutes
STALE_AFTER = 30.0
LIVE = ("PENDING", "ENQUEUED", "DELAYED")


class Interrupted(BaseException):
    """Raised out of a step whose process is shutting down: not an ``Exception``, so DBOS records no outcome and the
    workflow stays pending, for the janitor of another process (or the next launch) to hand out again. A run whose
    agent was killed by the shutdown must not be recorded as the model's failure."""


@dataclass(slots=True)
class _Served:
    store: LabStore
    executor_id: str
    url: str
    stop: threading.Event
    on_done: Callable[[RunRecord], None] | None = None
    janitor: threading.Thread | None = field(default=None)


_served: _Served | None = None
_lock = threading.Lock()


def system_url(records_url: str) -> str:
    """DBOS's database for the records at ``records_url``: the same PostgreSQL database, or ``NAME-dbos.sqlite``
    beside an SQLite file ``NAME.sqlite`` (two record files never share a queue, so never a run's workflow id)."""
    if records_url.startswith(("postgresql", "postgres:")):
        return records_url
    if records_url.startswith("sqlite:///") and len(records_url) > len("sqlite:///"):
        path = Path(records_url[len("sqlite:///"):]).resolve()
        return f"sqlite:///{path.with_name(path.stem + '-dbos.sqlite')}"
    raise ConfigError(f"the distributed lab needs a PostgreSQL or SQLite --db, not {_redact(records_url)!r}",
                      hint="--db postgresql+psycopg://USER@HOST/DB across machines; a file (or sqlite:///PATH) for "
                           "several processes on one machine")


def _redact(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    if sep and "@" in rest:
        creds, _, host = rest.rpartition("@")
        return f"{scheme}://{creds.split(':', 1)[0]}:***@{host}" if ":" in creds else url
    return url


# ---- a job, as DBOS stores it ---------------------------------------------------------------------------------------


def suite_spec(suite: Suite) -> str:
    """What a worker loads the suite from: a bundled suite by name (each machine has its own install of tomo), any
    other by its absolute path (which must be the same on every machine, e.g. a shared checkout)."""
    directory = suite.dir.resolve()
    return directory.name if directory.parent == BUNDLED.resolve() else str(directory)


def payload(suite: Suite, job: Job, settings: RunSettings) -> dict[str, Any]:
    """One run, in plain values: the suite, the key, and the settings that are the plan's (the interpreter and the
    build are the worker's own: the record names the build that measured it)."""
    return {"suite": suite_spec(suite), "suite_name": suite.name, "task": job.task.id, "variant": job.variant.name,
            "args": list(job.variant.args), "model": job.model, "repeat": job.repeat,
            "timeout_s": settings.timeout_s, "mini_steps": settings.mini_steps,
            "keep": str(settings.keep) if settings.keep is not None else None}


def key_of(data: dict[str, Any]) -> Key:
    return (data["suite_name"], data["task"], data["variant"], Variant(data["variant"], tuple(data["args"])).text,
            data["model"], int(data["repeat"]))


def workflow_base(key: Key) -> str:
    """``tomo-lab:SUITE/TASK/VARIANT/REPEAT:HASH`` (the hash covers the whole key, model and flags included); a
    workflow's id is this and ``:N``, N counting the attempts that ended without a record."""
    suite, task, variant, _args, _model, repeat = key
    digest = hashlib.sha256(json.dumps(list(key)).encode()).hexdigest()[:16]
    return f"{PREFIX}{suite}/{task}/{variant}/{repeat}:{digest}"


def _job_of(data: dict[str, Any]) -> tuple[Job, RunSettings]:
    suite = load_suite(data["suite"])
    if suite.name != data["suite_name"]:
        raise ConfigError(f"the suite at {data['suite']!r} is {suite.name!r} here, not {data['suite_name']!r}",
                          hint="every worker needs the same suite (the same tomo version, or the same path)")
    (task,) = suite.select([data["task"]])
    settings = RunSettings(timeout_s=float(data["timeout_s"]), mini_steps=int(data["mini_steps"]),
                           keep=Path(data["keep"]) if data["keep"] else None)
    return Job(task, Variant(data["variant"], tuple(data["args"])), data["model"], int(data["repeat"])), settings


# ---- the workflow -------------------------------------------------------------------------------------------------


@DBOS.step(name="tomo_lab_run_job", retries_allowed=False)
def _run_and_record(data: dict[str, Any]) -> dict[str, Any]:
    served = _served  # None: shutdown() ran while DBOS was handing this step out (the lab's tests saw it)
    key = key_of(data)
    if served is None or served.stop.is_set():  # dequeued while this process was stopping: another one runs it
        raise Interrupted(f"{workflow_base(key)}: this process is stopping")
    if served.store.has(key):
        return {"recorded": False}  # recorded before DBOS noted this step, or by a worker taken for dead
    job, settings = _job_of(data)
    record = run_job(job, data["suite_name"], settings)
    if served.stop.is_set():
        raise Interrupted(f"{workflow_base(key)}: this process is stopping")
    stored = served.store.add_once(record)
    if stored and served.on_done is not None:
        served.on_done(record)
    return {"recorded": stored, "solved": record.solved, "outcome": record.outcome, "error": record.error[:500]}


@DBOS.workflow(name=WORKFLOW)
def run_workflow(data: dict[str, Any]) -> dict[str, Any]:
    return _run_and_record(data)


# ---- serving ------------------------------------------------------------------------------------------------------


def launch(store: LabStore, url: str, *, concurrency: int | None = None, stale_after: float = STALE_AFTER,
           on_done: Callable[[RunRecord], None] | None = None) -> str:
    """Starts DBOS in this process on system database ``url`` and serves the lab's queue; returns the executor id.

    ``concurrency``: runs at once in each serving process. DBOS keeps one such limit for the queue, in its database,
    so a number given here applies to every process that serves it; None leaves the queue's limit as it is (1 for a
    new queue)."""
    global _served
    with _lock:
        if _served is not None:
            raise ConfigError(f"the distributed lab already runs in this process on {_redact(_served.url)}",
                              hint="one process serves one lab queue")
        executor_id = f"tomo-lab-{socket.gethostname()}-{os.getpid()}"
        config: DBOSConfig = {"name": APP_NAME, "system_database_url": url, "executor_id": executor_id,
                              "application_version": f"tomo-{__version__}", "log_level": "WARNING",
                              "notification_listener_polling_interval_sec": 0.1}
        served = _Served(store, executor_id, url, threading.Event(), on_done)
        _served = served  # before launch: DBOS may start queued work at once
        try:
            DBOS(config=config)
            DBOS.launch()
            DBOS.register_queue(QUEUE, worker_concurrency=concurrency or 1, polling_interval_sec=POLL,
                                on_conflict="never_update" if concurrency is None else "always_update")
            store.heartbeat(executor_id, socket.gethostname(), os.getpid())
        except BaseException:
            _served = None
            DBOS.destroy(destroy_registry=False)
            raise
        served.janitor = threading.Thread(target=_janitor, args=(served, stale_after), daemon=True,
                                          name="tomo-lab-janitor")
        served.janitor.start()
        return executor_id


def shutdown() -> None:
    """Stops serving: no new run starts, the agents in flight are stopped (their runs stay pending in DBOS), then
    DBOS. The executor's heartbeat row stays on purpose: a run this process leaves pending is handed out again only
    by a janitor that finds the row dead (on this host at once, elsewhere after ``stale_after``), which then forgets
    it; forgetting it here would strand that run. A row with nothing pending costs a janitor one empty look."""
    global _served
    with _lock:
        if _served is None:
            return
        _served.stop.set()
        stop_all()
        DBOS.destroy(destroy_registry=False)
        _served = None


def _janitor(served: _Served, stale_after: float) -> None:
    host = socket.gethostname()
    while not served.stop.wait(1.0):
        store = served.store
        try:
            store.heartbeat(served.executor_id, host, os.getpid())
            dead = dead_executors(store.executors(), served.executor_id, host, stale_after)
            if dead:
                DBOS._recover_pending_workflows(dead)
                for executor_id in dead:
                    store.forget_executor(executor_id)
        except Exception as exc:  # keep serving: the next round tries again
            DBOS.logger.warning(f"tomo lab janitor: {exc}")


# ---- driving a plan -----------------------------------------------------------------------------------------------


def enqueue(suite: Suite, jobs: list[Job], settings: RunSettings) -> list[str]:
    """Queues each run (in the plan's order) and returns the workflow ids to watch. A run whose workflow is still
    queued or running is attached to, not queued again; one whose workflows all ended without a record (its step
    failed, or the records were reset) gets a new attempt."""
    queue = DBOS.retrieve_queue(QUEUE)
    if queue is None:
        raise ConfigError(f"the DBOS queue {QUEUE!r} is not registered", hint="launch() registers it")
    ids: list[str] = []
    for job in jobs:
        data = payload(suite, job, settings)
        base = workflow_base(key_of(data))
        earlier = DBOS.list_workflows(workflow_id_prefix=f"{base}:", load_input=False, load_output=False)
        live = [w.workflow_id for w in earlier if w.status in LIVE]
        if live:
            ids.append(live[0])
            continue
        workflow_id = f"{base}:{len(earlier)}"
        with SetWorkflowID(workflow_id):
            queue.enqueue(run_workflow, data)
        ids.append(workflow_id)
    return ids


def still_live(workflow_ids: list[str]) -> set[str]:
    """The ids among ``workflow_ids`` that are queued or running (in any process)."""
    if not workflow_ids:
        return set()
    rows = DBOS.list_workflows(workflow_ids=workflow_ids, status=list(LIVE), load_input=False, load_output=False)
    return {w.workflow_id for w in rows}


def failures(workflow_ids: list[str]) -> dict[str, str]:
    """``{workflow id: error}`` of those that ended in an error (a step that raised: a suite a worker cannot load,
    a records database it cannot write)."""
    if not workflow_ids:
        return {}
    ended = ["ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"]
    rows = DBOS.list_workflows(workflow_ids=workflow_ids, status=ended, load_input=False, load_output=True)
    return {w.workflow_id: str(w.error or w.status) for w in rows}
