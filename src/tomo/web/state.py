"""What every request of the console shares: the store, the tools, the assistant and the login limits.

It sits below the modules that use it (app builds it, auth and page read it) so that none of them has to import
app, the module that puts them together: the console's modules import downwards only (app -> auth, page -> state).
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request

from tomo.store.console import ConsoleStore, LoginLimits
from tomo.web.assistant import Assistant
from tomo.web.tools import ConsoleTools


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
