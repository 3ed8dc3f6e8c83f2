"""Who is asking: the one dependency every ``/v1/web`` route goes through, and the login rules around it.

:func:`require_caller` reads the session cookie, finds the live session in the store (tokens are kept hashed;
expired and logged-out ones are gone) and builds the :class:`WebCaller` from it: the user and the tenant the session
was opened for. A state-changing request must also send the session's CSRF token in ``X-CSRF-Token`` (the page gets
it from ``GET /v1/web/me``); a cookie alone is never enough to change anything. No route reads a tenant from a body,
a query or a path: the only tenant there is comes from here.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from fastapi import HTTPException, Request

from tomo.store.console import Session
from tomo.tools import Caller
from tomo.web.state import state_of

COOKIE = "tomo_session"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


@dataclass(frozen=True, slots=True)
class WebCaller:
    """The verified caller of one request: the session it came with and the tools' view of it."""

    session: Session
    token: str

    @property
    def user_id(self) -> int:
        return self.session.user.id

    @property
    def tenant_id(self) -> int:
        return self.session.tenant.id

    @property
    def caller(self) -> Caller:
        return Caller(user=self.session.user.email, tenant=self.session.tenant.id)


def session_of(request: Request) -> tuple[Session, str] | None:
    """The live session of the request's cookie, or ``None`` (no cookie, forged, expired or logged out)."""
    token = request.cookies.get(COOKIE, "")
    if not token:
        return None
    session = state_of(request).store.session(token)
    return None if session is None else (session, token)


def require_caller(request: Request) -> WebCaller:
    """THE auth dependency: 401 without a live session, 403 for a state-changing request without its CSRF token."""
    found = session_of(request)
    if found is None:
        raise HTTPException(401, "log in first: no valid session (POST /v1/web/login)",
                            headers={"WWW-Authenticate": 'Cookie realm="tomo"'})
    session, token = found
    if request.method not in SAFE_METHODS:
        sent = request.headers.get(CSRF_HEADER, "")
        if not sent or not hmac.compare_digest(sent.encode(), session.csrf_token.encode()):
            raise HTTPException(403, f"missing or wrong {CSRF_HEADER} header: send the csrf_token that "
                                     "GET /v1/web/me returns")
    return WebCaller(session, token)


def same_origin(request: Request) -> bool:
    """A login posted from another site (login CSRF) is refused: when the browser says where the request comes
    from, it must be this server."""
    origin = request.headers.get("origin")
    if origin and origin != "null":
        host = request.headers.get("host", "")
        return origin.split("://", 1)[-1] == host
    return request.headers.get("sec-fetch-site", "same-origin") in ("same-origin", "none")
