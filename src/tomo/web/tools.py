"""What the console's assistant may do: ordinary functions over the caller's tenant, also behind the REST routes.

Every function takes the verified :class:`~tomo.tools.Caller` as a parameter the registry injects, so the model
never sees a tenant in a schema and a ``tenant_id`` it sends is dropped. Each function looks the tenant's data up by
``caller.tenant`` and nothing else; a job or workspace of another tenant is "not found", exactly like one that does
not exist. The REST routes call the same functions, so what the assistant reads is what the page shows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tomo.errors import TomoError
from tomo.store.console import ConsoleStore, Workspace
from tomo.tools import Caller, Registry
from tomo.web.jobs import JobsReader, job_detail, job_summary

DEFAULT_TOOLS = ("list_workspaces", "list_jobs", "show_job", "find_symbol", "references", "callers")


class NotFound(TomoError):
    """A job, workspace or conversation that the caller's tenant does not have (whether or not it exists)."""


class Ambiguous(TomoError):
    """A name that fits more than one of the caller's own things (a job id in two of their workspaces): the caller
    must say which, rather than be shown whichever was found first."""


class ConsoleTools:
    """The tenant-scoped operations. Methods are registered as tools as they are (bound methods, typed)."""

    def __init__(self, store: ConsoleStore, jobs: JobsReader) -> None:
        self.store = store
        self.jobs = jobs

    def _workspaces(self, caller: Caller) -> list[Workspace]:
        return self.store.workspaces(int(caller.tenant))

    def _workspace(self, caller: Caller, name: str) -> Workspace:
        spaces = self._workspaces(caller)
        for ws in spaces:
            if name in (ws.name, str(ws.id)):
                return ws
        known = ", ".join(ws.name for ws in spaces) or "none"
        raise NotFound(f"there is no workspace {name!r}", hint=f"your workspaces: {known}")

    def list_workspaces(self, caller: Caller) -> list[dict[str, Any]]:
        """The repositories registered to your team, with their names and paths."""
        return [ws.to_dict() for ws in self._workspaces(caller)]

    def list_jobs(self, caller: Caller, status: str | None = None, workspace: str | None = None,
                  ) -> list[dict[str, Any]]:
        """Your team's jobs, newest first.

        Args:
            status: only jobs with this status (for example running, done, failed)
            workspace: only jobs of this workspace (its name)
        """
        spaces = [self._workspace(caller, workspace)] if workspace else self._workspaces(caller)
        by_path = {ws.path: ws for ws in spaces}
        jobs = self.jobs.list_jobs(spaces)
        if status:
            jobs = [j for j in jobs if j.status == status]
        return [job_summary(j, by_path) for j in jobs]

    def show_job(self, caller: Caller, job_id: str, workspace: str | None = None) -> dict[str, Any]:
        """One job with its stages, each worker's output and the tokens used.

        Args:
            job_id: the job's id, as list_jobs shows it
            workspace: the job's workspace (its name or id, as list_jobs shows it); needed only when two of your
                workspaces have a job with this id
        """
        spaces = [self._workspace(caller, workspace)] if workspace else self._workspaces(caller)
        found = self.jobs.find_jobs(spaces, job_id)
        by_path = {ws.path: ws for ws in spaces}
        if not found:
            where = f" in workspace {spaces[0].name!r}" if workspace else ""
            raise NotFound(f"there is no job {job_id!r}{where}", hint="list_jobs shows your team's jobs")
        if len(found) > 1:
            names = ", ".join(sorted(by_path[j.workspace].name for j in found))
            raise Ambiguous(f"job {job_id!r} is in {len(found)} of your workspaces ({names})",
                            hint="say which: the workspace argument (GET /v1/web/jobs/ID?workspace=NAME)")
        return job_detail(found[0], by_path)

    def job_details(self, caller: Caller, limit: int = 50) -> list[dict[str, Any]]:
        """The newest jobs in full (the page's jobs view): one read per store, not one per job."""
        spaces = self._workspaces(caller)
        by_path = {ws.path: ws for ws in spaces}
        return [job_detail(j, by_path) for j in self.jobs.list_jobs(spaces)[:limit]]

    def find_symbol(self, caller: Caller, workspace: str, query: str) -> list[dict[str, Any]]:
        """Definitions whose name matches ``query`` in one of your workspaces (prism's code graph).

        Args:
            workspace: the workspace's name
            query: a name or a dotted qualified name, e.g. Class or package.module.Class.method
        """
        with self._graph(caller, workspace) as graph:
            return [_symbol(s) for s in graph.find_symbol(query)]

    def references(self, caller: Caller, workspace: str, symbol: str) -> list[dict[str, Any]]:
        """Where a symbol is used in one of your workspaces, each with its confidence.

        Args:
            workspace: the workspace's name
            symbol: the symbol's qualified name, as find_symbol shows it
        """
        with self._graph(caller, workspace) as graph:
            return [{"path": r.path, "line": r.line, "text": r.text, "confidence": r.confidence, "kind": r.kind}
                    for r in graph.references(symbol)]

    def callers(self, caller: Caller, workspace: str, symbol: str) -> list[dict[str, Any]]:
        """The functions that call a symbol in one of your workspaces.

        Args:
            workspace: the workspace's name
            symbol: the symbol's qualified name, as find_symbol shows it
        """
        with self._graph(caller, workspace) as graph:
            return [{"caller": c.symbol.qualname, "path": c.reference.path, "line": c.reference.line,
                     "text": c.reference.text} for c in graph.callers(symbol)]

    def _graph(self, caller: Caller, workspace: str) -> Any:
        from tomo.prism import Graph

        ws = self._workspace(caller, workspace)
        return Graph.open(Path(ws.path))


def _symbol(s: Any) -> dict[str, Any]:
    return {"qualname": s.qualname, "kind": s.kind, "path": s.path, "line": s.line}


def build_registry(tools: ConsoleTools) -> Registry:
    """The console's registry: every tool runs in a worker thread (they read databases and files)."""
    registry = Registry()
    registry.register(tools.list_workspaces, unit="workspaces", thread=True)
    registry.register(tools.list_jobs, unit="jobs", thread=True)
    registry.register(tools.show_job, thread=True)
    registry.register(tools.find_symbol, unit="symbols", thread=True)
    registry.register(tools.references, unit="references", thread=True)
    registry.register(tools.callers, unit="callers", thread=True)
    return registry
