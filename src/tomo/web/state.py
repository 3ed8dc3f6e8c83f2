"""What every request of the console shares: the store, the tools, the assistant and the login rules.

It sits below the modules that use it (app builds it, auth and page read it) so that none of them has to import
app, the module that puts them together: the console's modules import downwards only (app -> auth, page -> state).
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request

from tomo.store.console import ConsoleStore
from tomo.web.assistant import Assistant
from tomo.web.tools import ConsoleTools


@dataclass(frozen=True, slots=True)
class LoginLimits:
    """Failed logins allowed per email and per client address within ``window_s`` before 429."""

    per_email: int = 5
    per_address: int = 30
    window_s: float = 900.0


@dataclass
class ConsoleState:
    store: ConsoleStore
    tools: ConsoleTools
    assistant: Assistant
    session_ttl_s: float
    login_limits: LoginLimits
    secure_cookies: bool | None


def state_of(request: Request) -> ConsoleState:
    """The console's state, which create_app hangs on the app (``app.state.console``)."""
    state: ConsoleState = request.app.state.console
    return state
