"""Which worker is running right now, for tools: the idempotency key of the current worker run.

A tool with a side effect (open a ticket, push a branch, charge a card) reads :func:`idempotency_key` and passes it
on, or records it, so that when a crash makes the team run the same worker again the tool can see the repeat. The key
is ``JOB/STAGE/WORKER``: the same for every attempt at that worker, in any process and on either backend; ``attempt``
counts the tries (1 on a first run).

It is a context variable, so parallel workers in one event loop each see their own.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class WorkerContext:
    job_id: str
    stage: int
    worker: int
    role: str
    key: str
    attempt: int


_current: ContextVar[WorkerContext | None] = ContextVar("tomo_team_worker", default=None)


def current_worker() -> WorkerContext | None:
    """The worker whose run is calling, or None outside a team job."""
    return _current.get()


def idempotency_key() -> str | None:
    """``JOB/STAGE/WORKER`` of the worker whose run is calling, or None outside a team job."""
    context = _current.get()
    return context.key if context else None


def enter(context: WorkerContext) -> object:
    """Sets the current worker; returns the token :func:`leave` needs."""
    return _current.set(context)


def leave(token: object) -> None:
    _current.reset(token)  # type: ignore[arg-type]
