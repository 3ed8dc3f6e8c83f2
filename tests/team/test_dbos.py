"""The DBOS backend through the real CLI: the same graph on SQLite gives the same job view as the local backend and
survives a SIGKILL; two worker processes sharing a PostgreSQL server split one job and finish it after one dies or is
stopped."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from team_support import cli_env, open_store, reply, require_dbos, script

from tomo.store.db import connect
from tomo.store.jobs import JobStore

STAGES = "plan:planner | build:implementer,tester | review:reviewer"


def _roles(folder: Path, slow: float) -> str:
    specs = {"planner": script(folder, "planner", reply("the plan", tokens=(11, 4))),
             "implementer": script(folder, "implementer", reply("the code", tokens=(13, 6), delay=slow)),
             "tester": script(folder, "tester", reply("the tests", tokens=(12, 5))),
             "reviewer": script(folder, "reviewer", reply("APPROVE", tokens=(10, 2)))}
    return ",".join(f"{role}={spec}" for role, spec in specs.items())


def _view(job: dict[str, Any]) -> list[Any]:
    """What must not depend on the backend: statuses, outputs and usage of every stage and worker."""
    return [job["status"], job["input_tokens"], job["output_tokens"],
            [(s["name"], s["status"], s["output"], [(w["role"], w["status"], w["output"], w["input_tokens"],
                                                     w["output_tokens"]) for w in s["workers"]])
             for s in job["stages"]]]


def _tomo(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "tomo", *args], cwd=cwd, env=cli_env(), text=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait_for(check: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def test_dbos_on_sqlite_gives_the_local_view_and_resumes_after_a_kill(
        tmp_path: Path, run_tomo: Callable[..., subprocess.CompletedProcess[str]]) -> None:
    require_dbos()
    local_ws, dbos_ws = tmp_path / "local", tmp_path / "dbos"
    local_ws.mkdir()
    dbos_ws.mkdir()
    done = run_tomo("team", "add a --json flag", "--stages", STAGES, "--roles", _roles(local_ws, 0.0),
                    "--job-id", "j1", cwd=local_ws)
    assert done.returncode == 0, done.stderr
    # the DBOS run is killed while the implementer's model is answering (the planner has its checkpoint)
    process = _tomo("team", "add a --json flag", "--backend", "dbos", "--stages", STAGES, "--roles",
                    _roles(dbos_ws, 4.0), "--job-id", "j1", cwd=dbos_ws)
    store_path = dbos_ws / ".tomo" / "team.sqlite"

    def implementer_running() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"the DBOS run ended early: {process.communicate()}")
        if not store_path.exists():
            return False
        job = open_store(store_path).get_job("j1")
        return job is not None and job.stages[1].workers[0].status == "running"

    _wait_for(implementer_running, "the implementer to start")
    process.send_signal(signal.SIGKILL)
    process.communicate()
    store = open_store(store_path)
    job = store.get_job("j1")
    assert job is not None and job.status == "running" and job.stages[0].status == "complete"
    resumed = run_tomo("team", "resume", "j1", "--backend", "dbos", cwd=dbos_ws, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert "## reviewer\n\nAPPROVE" in resumed.stdout
    runs = store.worker_runs("j1")
    assert runs[(0, 0)][0] == 1  # the planner finished before the kill and was not started again
    assert runs[(1, 0)][0] == 2  # the implementer was interrupted once and ran again
    shown = run_tomo("team", "show", "j1", "--json", cwd=dbos_ws)
    assert shown.returncode == 0, shown.stderr
    local = open_store(local_ws / ".tomo" / "team.sqlite").get_job("j1")
    assert local is not None
    assert _view(json.loads(shown.stdout)) == _view(local.to_dict())  # what `tomo team show --json` prints
    again = run_tomo("team", "resume", "j1", "--backend", "dbos", cwd=dbos_ws)
    assert again.returncode == 0 and "already complete" in again.stderr


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGTERM], ids=["killed", "stopped"])
def test_two_worker_processes_on_postgres_split_a_job_and_finish_it_after_one_ends(
        tmp_path: Path, postgres: str, run_tomo: Callable[..., subprocess.CompletedProcess[str]],
        stop: signal.Signals) -> None:
    """Killed (SIGKILL) or stopped (SIGTERM, which shuts DBOS down cleanly) while a worker of its runs: the other
    process finishes the job, and what the first finished is never redone."""
    # one worker at a time per process, so each process runs builders one after another and both get some
    job_id = f"pg-{stop.name.lower()}"  # one cluster serves the module's tests
    (tmp_path / "tomo.toml").write_text("[team]\nworker_concurrency = 1\n\n[team.concurrency]\nscripted = 4\n")
    # only the roles this graph has: `tomo team` refuses a --roles entry no worker would read
    mapped = [item for item in _roles(tmp_path, 1.0).split(",") if item.startswith(("planner=", "reviewer="))]
    roles = ",".join([*mapped, "builder=" + script(tmp_path, "builder", reply("built", tokens=(9, 9), delay=1.0))])
    store = JobStore(connect(postgres))
    store.create_schema()
    first = _tomo("team", "worker", "--db", postgres, "--stale-after", "5", cwd=tmp_path)
    processes = [first]
    try:
        # by pid: the module's cluster is shared, and a worker the other case stopped left its row on purpose
        _wait_for(lambda: first.pid in {row.pid for row in store.executors()}, "the first worker process to serve")
        second = _tomo("team", "worker", "--db", postgres, "--stale-after", "5", cwd=tmp_path)
        processes.append(second)
        _wait_for(lambda: second.pid in {row.pid for row in store.executors()}, "the second worker process to serve")
        ids = {row.pid: row.executor_id for row in store.executors()}
        submitted = run_tomo("team", "split the work", "--backend", "dbos", "--detach", "--db", postgres,
                             "--stages", "plan:planner | build:builder*6 | review:reviewer", "--roles", roles,
                             "--job-id", job_id, cwd=tmp_path)
        assert submitted.returncode == 0, submitted.stderr
        assert "enqueued" in submitted.stdout

        def first_has_finished_and_running() -> bool:
            runs = store.worker_runs(job_id)
            job = store.get_job(job_id)
            assert job is not None
            statuses = {(s.index, w.index): w.status for s in job.stages for w in s.workers}
            mine = [key for key, (_, executor) in runs.items() if executor == ids[first.pid]]
            return (any(statuses[k] == "complete" for k in mine)
                    and any(statuses[k] == "running" for k in mine))

        _wait_for(first_has_finished_and_running, "the first process to finish a worker and start another", 120)
        before = store.get_job(job_id)
        assert before is not None
        finished_by_first = {(s.index, w.index) for s in before.stages for w in s.workers if w.status == "complete"
                             and store.worker_runs(job_id)[(s.index, w.index)][1] == ids[first.pid]}
        first.send_signal(stop)
        first.communicate(timeout=60)

        def complete() -> bool:
            job = store.get_job(job_id)
            return job is not None and job.status in ("complete", "failed", "incomplete")

        _wait_for(complete, "the second process to finish the job", timeout=120)
        job = store.get_job(job_id)
        assert job is not None and job.status == "complete", job.reason
        runs = store.worker_runs(job_id)
        executors = {executor for _, executor in runs.values()}
        assert ids[second.pid] in executors  # the survivor did work
        assert finished_by_first  # and so did the killed process, before it died
        for key in finished_by_first:
            assert runs[key] == (1, ids[first.pid])  # finished work was never redone
        assert all(w.status == "complete" for s in job.stages for w in s.workers)
        assert job.stages[-1].output == "## reviewer\n\nAPPROVE"
    finally:
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.communicate(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.communicate()
        store.engine.dispose()
