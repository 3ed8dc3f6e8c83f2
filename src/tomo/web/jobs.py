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
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

from tomo.store.console import Workspace
from tomo.store.db import STORE_ENV, connect, default_url

JOB_STORE_FILE = "team.sqlite"


class JobsReader:
    """Opens job stores lazily, one engine per URL, and answers for a tenant's workspaces only."""

    def __init__(self) -> None:
        self._stores: dict[str, Any] = {}
        self._lock = threading.Lock()

    @staticmethod
    def available() -> bool:
        try:
            import tomo.store.jobs  # noqa: F401
        except ImportError:
            return False
        return True

    def _store(self, workspace: Path) -> Any | None:
        """The job store for ``workspace``, or ``None`` when nothing was ever checkpointed there."""
        try:
            from tomo.store.jobs import JobStore
        except ImportError:  # the team part is not installed in this tomo
            return None
        url = _job_store_url(workspace)
        if url is None:
            return None
        with self._lock:
            store = self._stores.get(url)
            if store is None:
                store = self._stores[url] = JobStore(connect(url))
        return store

    def list_jobs(self, workspaces: Sequence[Workspace]) -> list[Any]:
        """The jobs of ``workspaces`` (the caller's own), newest first."""
        by_store: dict[int, tuple[Any, list[str]]] = {}
        for ws in workspaces:
            store = self._store(Path(ws.path))
            if store is not None:
                by_store.setdefault(id(store), (store, []))[1].append(ws.path)
        owned = {ws.path for ws in workspaces}
        jobs: list[Any] = []
        for store, paths in by_store.values():
            jobs.extend(j for j in _safe_list(store, paths) if j.workspace in owned)
        jobs.sort(key=lambda j: j.created_at, reverse=True)
        return jobs

    def get_job(self, workspaces: Sequence[Workspace], job_id: str) -> Any | None:
        """The job ``job_id`` if it belongs to one of ``workspaces``; any other job is ``None``, like a missing one."""
        owned = {ws.path for ws in workspaces}
        seen: set[int] = set()
        for ws in workspaces:
            store = self._store(Path(ws.path))
            if store is None or id(store) in seen:
                continue
            seen.add(id(store))
            job = _safe_get(store, job_id)
            if job is not None and job.workspace in owned:
                return job
        return None

    def close(self) -> None:
        with self._lock:
            for store in self._stores.values():
                engine = getattr(store, "engine", None)
                if engine is not None:
                    engine.dispose()
            self._stores.clear()


def _job_store_url(workspace: Path) -> str | None:
    """The URL the team writes for ``workspace``; ``None`` for a SQLite file that does not exist yet (no job ever
    ran there, and opening it would create an empty file in someone's repository)."""
    if not workspace.is_dir():
        return None
    if not os.environ.get(STORE_ENV) and not (workspace / ".tomo" / JOB_STORE_FILE).is_file():
        return None
    return default_url(workspace, JOB_STORE_FILE)


def _has_tables(store: Any) -> bool:
    from sqlalchemy import inspect

    engine = getattr(store, "engine", None)
    return engine is None or bool(inspect(engine).get_table_names())


def _safe_list(store: Any, paths: list[str]) -> list[Any]:
    if not _has_tables(store):
        return []
    return list(store.list_jobs(paths))


def _safe_get(store: Any, job_id: str) -> Any | None:
    if not _has_tables(store):
        return None
    return store.get_job(job_id)


def job_summary(job: Any, names: dict[str, str]) -> dict[str, Any]:
    """One line of the jobs list: no outputs, just what a person scans for."""
    return {
        "job_id": job.job_id,
        "workspace": names.get(job.workspace, Path(job.workspace).name),
        "request": _clip(job.request, 300),
        "status": job.status,
        "reason": job.reason,
        "stages": len(job.stages),
        "stages_done": sum(1 for s in job.stages if s.status == "done"),
        "input_tokens": job.input_tokens,
        "output_tokens": job.output_tokens,
        "budget": job.budget,
        "created_at": job.created_at,
        "updated_at": job.updated_at,
    }


def job_detail(job: Any, names: dict[str, str]) -> dict[str, Any]:
    """The whole job: stages, their workers, outputs and usage."""
    detail = job_summary(job, names)
    detail["request"] = job.request
    detail["stages"] = [_plain(s) for s in job.stages]
    return detail


def _plain(value: Any) -> Any:
    return asdict(value) if is_dataclass(value) and not isinstance(value, type) else value


def _clip(text: str | None, limit: int) -> str:
    text = text or ""
    return text if len(text) <= limit else text[: limit - 1] + "…"
