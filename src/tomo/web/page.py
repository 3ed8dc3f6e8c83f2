"""The page: server-rendered HTML (Jinja2, autoescaped: every piece of data is text, never markup) plus one small
script for the composer's stream. Jobs, workspaces and the conversation are in the HTML itself, so the page reads
without JavaScript; only sending a message needs it.
"""

from __future__ import annotations

import datetime as dt
import json
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi.responses import HTMLResponse

if TYPE_CHECKING:
    from jinja2 import Environment

    from tomo.web.auth import WebCaller
    from tomo.web.state import ConsoleState

TEMPLATES = Path(__file__).resolve().parent / "templates"
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; "
       "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


@lru_cache(maxsize=1)
def _env() -> Environment:
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(default=True),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["when"] = _when
    env.filters["tokens"] = lambda n: f"{int(n or 0):,}"
    env.filters["compact"] = lambda v: json.dumps(v, ensure_ascii=False, default=str)[:300]
    return env


def _when(value: float | str | None) -> str:
    """A float timestamp or an ISO 8601 string as ``YYYY-MM-DD HH:MM UTC``."""
    if not value:
        return ""
    if isinstance(value, str):
        try:
            when = dt.datetime.fromisoformat(value)
        except ValueError:
            return value
        when = when if when.tzinfo else when.replace(tzinfo=dt.UTC)
    else:
        when = dt.datetime.fromtimestamp(float(value), tz=dt.UTC)
    return when.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _html(name: str, status: int = 200, **context: Any) -> HTMLResponse:
    body = _env().get_template(name).render(**context)
    return HTMLResponse(body, status_code=status, headers={"Content-Security-Policy": CSP,
                                                           "Cache-Control": "no-store"})


def render_login(error: str = "", status: int = 200) -> HTMLResponse:
    return _html("login.html", status, error=error)


def render_console(state: ConsoleState, caller: WebCaller, conversation_id: str | None) -> HTMLResponse:
    from tomo.errors import TomoError

    tools, store = state.tools, state.store
    who = caller.caller
    workspaces = tools.list_workspaces(who)
    jobs_error = ""
    try:
        jobs = tools.job_details(who)
    except TomoError as exc:
        jobs, jobs_error = [], exc.message
    conversations = store.conversations(caller.tenant_id, caller.user_id)
    current = None
    messages: list[Any] = []
    if conversation_id:
        current = store.conversation(caller.tenant_id, caller.user_id, conversation_id)
        if current is not None:
            messages = store.messages(current.id)
    assistant = state.assistant
    return _html("console.html", user=caller.session.user, tenant=caller.session.tenant, workspaces=workspaces,
                 jobs=jobs, jobs_error=jobs_error, conversations=conversations, current=current,
                 messages=messages, assistant_on=assistant.enabled, assistant_reason=assistant.disabled_reason,
                 job_total=len(jobs))
