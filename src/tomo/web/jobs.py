"""The team's jobs as the console sees them: read from each registered workspace's own job store, for one tenant.

A job started with ``tomo team`` in a workspace is checkpointed to ``default_url(workspace, "team.sqlite")`` (the
workspace's ``.tomo/team.sqlite``, or the shared store ``TOMO_DB`` names). The console opens that same store, read
only, and keeps one engine per URL so a page view does not reconnect. Jobs are filtered twice: by the workspaces
asked for in SQL, then again in Python against the tenant's own list, so a shared store can never leak a job of a
workspace the tenant does not own.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import inspect

from tomo.store.console import Workspace
from tomo.store.db import STORE_ENV, connect, default_url
from tomo.store.jobs import JobRecord, JobStore
from tomo.store.jobs import jobs as job_tables

JOB_STORE_FILE = "team.sqlite"


class JobsReader:
    """Opens job stores lazily, one engine per URL, and answers for a tenant's workspaces only."""

    def __init__(self) -> None:
        self._stores: dict[str, JobStore] = {}
        self._ready: set[int] = set()  # stores known to have the team's tables (they are never dropped)
        self._lock = threading.Lock()

    def _store(self, workspace: Path) -> JobStore | None:
        """The job store for ``workspace``, or ``None`` when nothing was ever checkpointed there."""
        url = _job_store_url(workspace)
        if url is None:
            return None
        with self._lock:
            store = self._stores.get(url)
            if store is None:
                store = self._stores[url] = JobStore(connect(url))
        return store

    def list_jobs(self, workspaces: Sequence[Workspace]) -> list[JobRecord]:
        """The jobs of ``workspaces`` (the caller's own), newest first."""
        by_store: dict[int, tuple[JobStore, list[str]]] = {}
        for ws in workspaces:
            store = self._store(Path(ws.path))
            if store is not None:
                by_store.setdefault(id(store), (store, []))[1].append(ws.path)
        owned = {ws.path for ws in workspaces}
        jobs: list[JobRecord] = []
        for store, paths in by_store.values():
            if self._has_tables(store):
                jobs.extend(j for j in store.list_jobs(paths) if j.workspace in owned)
        jobs.sort(key=lambda j: j.created_at, reverse=True)
        return jobs

    def find_jobs(self, workspaces: Sequence[Workspace], job_id: str) -> list[JobRecord]:
        """Every job called ``job_id`` in ``workspaces`` (a job of any other workspace is not there, like a missing
        one). A job id is unique in one store only: two workspaces, each with its own ``.tomo/team.sqlite``, can
        both hold a job ``fix-login``, so this answers all of them and the caller decides (see
        :meth:`tomo.web.tools.ConsoleTools.show_job`), instead of the first store asked deciding for it."""
        owned = {ws.path for ws in workspaces}
        seen: set[int] = set()
        found: list[JobRecord] = []
        for ws in workspaces:
            store = self._store(Path(ws.path))
            if store is None or id(store) in seen:
                continue
            seen.add(id(store))
            job = store.get_job(job_id) if self._has_tables(store) else None
            if job is not None and job.workspace in owned:
                found.append(job)
        return found

    def _has_tables(self, store: JobStore) -> bool:
        """A store the team never wrote to (a shared server without its tables) holds no jobs, rather than failing.
        Asked once per store: tables, once there, stay."""
        if id(store) in self._ready:
            return True
        if inspect(store.engine).has_table(job_tables.name):
            self._ready.add(id(store))
            return True
        return False

    def close(self) -> None:
        with self._lock:
            for store in self._stores.values():
                store.engine.dispose()
            self._stores.clear()
            self._ready.clear()


def _job_store_url(workspace: Path) -> str | None:
    """The URL the team writes for ``workspace``; ``None`` for a SQLite file that does not exist yet (no job ever
    ran there, and opening it would create an empty file in someone's repository)."""
    if not workspace.is_dir():
        return None
    if not os.environ.get(STORE_ENV) and not (workspace / ".tomo" / JOB_STORE_FILE).is_file():
        return None
    return default_url(workspace, JOB_STORE_FILE)


def job_summary(job: JobRecord, workspaces: dict[str, Workspace]) -> dict[str, Any]:
    """One line of the jobs list: no outputs, just what a person scans for. ``workspaces`` maps paths to the
    caller's workspaces: the job's workspace id goes with its id, since only the pair names one job everywhere."""
    ws = workspaces.get(job.workspace)
    return {
        "job_id": job.job_id,
        "workspace": ws.name if ws is not None else Path(job.workspace).name,
        "workspace_id": ws.id if ws is not None else None,
        "request": _clip(job.request, 300),
        "status": job.status,
        "reason": job.reason,
        "stages": len(job.stages),
        "stages_complete": sum(1 for s in job.stages if s.status == "complete"),
        "input_tokens": job.input_tokens,
        "output_tokens": job.output_tokens,
        "budget": job.budget,
        "created_at": job.created_at.isoformat(),
        "updated_at": job.updated_at.isoformat(),
    }


def job_detail(job: JobRecord, workspaces: dict[str, Workspace]) -> dict[str, Any]:
    """The whole job: stages, their workers, outputs and usage."""
    detail = job_summary(job, workspaces)
    detail["request"] = job.request
    detail["stages"] = [s.to_dict() for s in job.stages]
    return detail


def _clip(text: str | None, limit: int) -> str:
    text = text or ""
    return text if len(text) <= limit else text[: limit - 1] + "…"
