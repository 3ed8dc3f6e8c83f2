"""How `tomo team` shows a job: live progress while it runs, and a stored job as tables and plain text.

Everything the model or the request wrote is shown as :class:`rich.text.Text` (never parsed as markup).
"""

from __future__ import annotations

import time
from datetime import datetime

from rich.console import Console, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

from tomo.cli.rows import Cell, print_rows
from tomo.cli.safe import esc as escape  # markup and control characters: names and errors come from outside
from tomo.cli.safe import text as shown
from tomo.events import Event, JobDone, LimitReached, Notice, StageDone, StageStarted, WorkerDone, WorkerStarted
from tomo.store.jobs import JobRecord

_STYLE = {"complete": "green", "failed": "bold red", "skipped": "yellow", "running": "cyan", "pending": "dim",
          "incomplete": "yellow"}


class TeamProgress:
    """A Sink: a live table of stages and workers on a terminal, one line per event otherwise (pipes, CI, tests)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.live = console.is_terminal
        self._rows: dict[tuple[str, int], dict[str, object]] = {}
        self._order: list[tuple[str, int]] = []
        self._stages: dict[str, str] = {}
        self._live: Live | None = None

    def emit(self, event: Event) -> None:
        if isinstance(event, StageStarted):
            self._stages[event.stage] = "running"
            self._line(f"stage {escape(event.stage)}: {event.workers} worker(s) to run")
        elif isinstance(event, WorkerStarted):
            key = (event.stage, event.index)
            if key not in self._rows:
                self._order.append(key)
            again = f" (attempt {event.attempt})" if event.attempt > 1 else ""
            self._rows[key] = {"role": event.role, "model": event.model, "status": "running", "tokens": 0,
                               "started": time.perf_counter(), "seconds": None, "note": again.strip()}
            self._line(f"  {escape(event.stage)}/{escape(event.role)} started on {escape(event.model)}{again}")
        elif isinstance(event, WorkerDone):
            key = (event.stage, event.index)
            if key not in self._rows:
                self._order.append(key)
                self._rows[key] = {"role": event.role, "model": "", "started": None}
            row = self._rows[key]
            row.update(status=event.status, tokens=event.input_tokens + event.output_tokens,
                       seconds=event.seconds, note=event.error)
            tail = f": {escape(event.error)}" if event.error else ""
            self._line(f"  {escape(event.stage)}/{escape(event.role)} [{_STYLE.get(event.status, '')}]"
                       f"{event.status}[/] ({event.input_tokens + event.output_tokens:,} tokens, "
                       f"{event.seconds:.1f}s){tail}")
        elif isinstance(event, StageDone):
            self._stages[event.stage] = "complete"
            self._line(f"stage {escape(event.stage)} [green]complete[/] ({event.tokens:,} tokens)")
        elif isinstance(event, JobDone):
            self.close()
        elif isinstance(event, Notice) and event.level != "info":
            self._line(f"[yellow]{escape(event.level)}:[/] {escape(event.text)}")
        elif isinstance(event, LimitReached):
            self._line(f"[yellow]{escape(event.agent)}: stopped by its {escape(event.limit)} limit[/]")
        if self.live:
            if self._live is None:
                self._live = Live(self._table(), console=self.console, refresh_per_second=8, transient=False)
                self._live.start()
            self._live.update(self._table())

    def _line(self, markup: str) -> None:
        if not self.live:
            self.console.print(markup, highlight=False, soft_wrap=True)

    def _table(self) -> RenderableType:
        table = Table(show_edge=False, box=None, pad_edge=False)
        for column in ("stage", "worker", "model", "status", "tokens", "time", ""):
            table.add_column(column)
        now = time.perf_counter()
        for stage, index in self._order:
            row = self._rows[(stage, index)]
            status = str(row.get("status", ""))
            seconds = row.get("seconds")
            started = row.get("started")
            if seconds is None and isinstance(started, float):
                seconds = now - started
            table.add_row(Text(stage), Text(f"{row['role']}#{index}"), Text(str(row.get("model", ""))),
                          Text(status, style=_STYLE.get(status, "")), f"{row.get('tokens', 0):,}",
                          f"{seconds:.1f}s" if isinstance(seconds, float) else "", Text(str(row.get("note") or "")))
        return table

    def close(self) -> None:
        if self._live is not None:
            self._live.update(self._table())
            self._live.stop()
            self._live = None


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value else ""


def _clock(value: datetime | None) -> str:
    return value.strftime("%H:%M:%S") if value else ""


def _took(start: datetime | None, end: datetime | None) -> str:
    return f"{(end - start).total_seconds():.1f}s" if start and end else ""


def render_job(console: Console, job: JobRecord, *, outputs: bool = True) -> None:
    """``tomo team show``: the job's header, a table of its stages and workers, then each worker's output."""
    budget = f" of {job.budget:,}" if job.budget else ""
    console.print(Text.assemble(("job ", "bold"), (job.job_id, "bold"), "  ",
                                (job.status, _STYLE.get(job.status, "")),
                                f"  {job.total_tokens:,}{budget} tokens ({job.input_tokens:,} in, "
                                f"{job.output_tokens:,} out)"))
    console.print(Text(f"request: {job.request}"))
    console.print(Text(f"workspace: {job.workspace}   created {_when(job.created_at)} UTC, updated "
                       f"{_when(job.updated_at)} UTC"))
    if job.reason:
        console.print(Text(f"reason: {job.reason}", style="yellow"))
    rows: list[list[Cell]] = []
    for stage in job.stages:
        for worker in stage.workers:
            rows.append([f"{stage.index}:{stage.name}", f"{worker.role}#{worker.index}", worker.model,
                         (worker.status, _STYLE.get(worker.status, "")), f"{worker.input_tokens:,}",
                         f"{worker.output_tokens:,}", _clock(worker.started_at),
                         _took(worker.started_at, worker.ended_at), worker.error or ""])
        rows.append(["", ("(stage)", "dim"), "", (stage.status, _STYLE.get(stage.status, "")), "", "",
                     _clock(stage.started_at), _took(stage.started_at, stage.ended_at), ""])
    print_rows(("stage", "worker", "model", "status", "in", "out", "started", "took", "error"), rows, console=console)
    if not outputs:
        return
    for stage in job.stages:
        for worker in stage.workers:
            if worker.output:
                console.print(Text(f"\n── {stage.name} / {worker.role}#{worker.index} ──", style="bold"))
                console.print(shown(worker.output))  # a model's words: shown, never obeyed


def print_jobs(console: Console, jobs: list[JobRecord]) -> None:
    """``tomo team list``: one row a job, newest first (a pipe gets plain columns, each request's first line whole)."""
    if not jobs:
        console.print(Text("no jobs in this store yet; start one with tomo team REQUEST"))
        return
    rows: list[list[Cell]] = []
    for job in jobs:
        done = sum(1 for s in job.stages if s.status == "complete")
        request = job.request.splitlines()[0] if job.request else ""
        rows.append([job.job_id, (job.status, _STYLE.get(job.status, "")), f"{done}/{len(job.stages)}",
                     f"{job.total_tokens:,}", _when(job.created_at),
                     request if not console.is_terminal or len(request) <= 60 else request[:60] + "…"])
    print_rows(("job", "status", "stages", "tokens", "created (UTC)", "request"), rows, console=console)
