"""The job store on real SQLite: the read API the console codes against, and the checkpoint writes."""

from __future__ import annotations

from datetime import UTC
from pathlib import Path

import pytest

from tomo.store.db import connect
from tomo.store.jobs import JobStore, NewStage, NewWorker


def _store(tmp_path: Path) -> JobStore:
    store = JobStore(connect(f"sqlite:///{tmp_path / 'team.sqlite'}"))
    store.create_schema()
    store.create_schema()  # idempotent
    return store


def _job(store: JobStore, job_id: str, workspace: str = "/w") -> None:
    store.create_job(job_id, workspace=workspace, request="do it", budget=1000, graph={"stages": []},
                     stages_=[NewStage("plan", [NewWorker("planner", "m1")]),
                              NewStage("build", [NewWorker("implementer", "m2"), NewWorker("tester", "m3")])])


def test_a_new_job_reads_back_pending_with_aware_times(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _job(store, "j1")
    job = store.get_job("j1")
    assert job is not None
    assert (job.status, job.budget, job.request, job.workspace) == ("running", 1000, "do it", "/w")
    assert [s.name for s in job.stages] == ["plan", "build"]
    assert [(w.index, w.role, w.model, w.status) for w in job.stages[1].workers] == [
        (0, "implementer", "m2", "pending"), (1, "tester", "m3", "pending")]
    assert job.created_at.tzinfo is not None and job.created_at.utcoffset() == UTC.utcoffset(None)
    assert store.get_job("nope") is None


def test_a_checkpoint_counts_tokens_once_and_list_is_newest_first(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _job(store, "j1", "/a")
    _job(store, "j2", "/b")
    store.stage_started("j1", 0, "do it")
    store.worker_started("j1", 0, 0, "m1")
    assert store.worker_finished("j1", 0, 0, status="complete", output="plan", input_tokens=10, output_tokens=5)
    assert not store.worker_finished("j1", 0, 0, status="complete", output="again", input_tokens=10, output_tokens=5)
    store.stage_finished("j1", 0, status="complete", output="## planner\nplan")
    store.job_finished("j1", status="incomplete", reason="budget spent")
    job = store.get_job("j1")
    assert job is not None
    worker = job.stages[0].workers[0]
    assert (worker.status, worker.output, worker.input_tokens, worker.output_tokens) == ("complete", "plan", 10, 5)
    assert worker.started_at is not None and worker.ended_at is not None and worker.ended_at >= worker.started_at
    assert (job.input_tokens, job.output_tokens, job.status, job.reason) == (10, 5, "incomplete", "budget spent")
    assert job.stages[0].output == "## planner\nplan"
    assert [j.job_id for j in store.list_jobs()] == ["j2", "j1"]
    assert [j.job_id for j in store.list_jobs(["/a"])] == ["j1"]
    assert store.list_jobs([]) == []
    assert store.get_job("j1").to_dict()["stages"][0]["workers"][0]["output"] == "plan"  # type: ignore[union-attr]


def test_a_finished_worker_must_say_how(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _job(store, "j1")
    with pytest.raises(ValueError, match="complete or failed"):
        store.worker_finished("j1", 0, 0, status="done", output="", input_tokens=0, output_tokens=0)
