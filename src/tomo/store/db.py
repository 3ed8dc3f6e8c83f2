"""Opening a store: SQLite (WAL, synchronous FULL, foreign keys) by default, PostgreSQL by URL.

Why here and not in each part: a job that ``tomo team`` checkpoints must be readable by ``tomo serve`` from the same
file or server, so both open it the same way. SQLAlchemy is imported lazily by the callers of this module only.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tomo.errors import ConfigError, Unavailable

if TYPE_CHECKING:
    from sqlalchemy.engine import URL, Engine

STORE_ENV = "TOMO_DB"
CONNECT_TIMEOUT_S = 10
"""How long a connection to a database server may take: a host that drops packets answers nothing, and libpq
would otherwise wait for the operating system's TCP timeout (minutes) before a verb can say so."""


def default_url(workspace: Path, filename: str, *, create: bool = True) -> str:
    """``sqlite:///WORKSPACE/.tomo/FILENAME``, unless ``TOMO_DB`` names a shared store. The folder is created only
    with ``create`` (a verb that writes); a verb that only reads leaves the workspace as it found it."""
    shared = os.environ.get(STORE_ENV)
    if shared:
        return shared
    folder = workspace.resolve() / ".tomo"
    if create:
        folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{folder / filename}"


def sqlite_file(url: str) -> Path | None:
    """The file a ``sqlite:///PATH`` URL names; ``None`` for a server's URL or an in-memory database.

    A verb that only reads asks this first: connecting to a SQLite file that is not there creates it (and its
    folder must exist), which is a write a listing must not make."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except ArgumentError:
        return None
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)


def where(url: URL) -> str:
    """Where a store is, for a person: ``HOST:PORT`` of a server (its default port when the URL names none), or a
    SQLite file's path. Never the user's password: errors that quote it end up in logs and issue reports."""
    if url.get_backend_name() == "sqlite":
        return url.database or ":memory:"
    port = url.port or {"postgresql": 5432, "mysql": 3306, "mariadb": 3306}.get(url.get_backend_name())
    host = url.host or "localhost"  # libpq's default: the local socket
    host = f"[{host}]" if ":" in host else host  # an IPv6 address
    return f"{host}:{port}" if port else host


def reach(engine: Engine) -> None:
    """Connects once, so that a store nobody can reach fails here, in one line, and not in the first query of some
    later step as a traceback. Raises :class:`~tomo.errors.Unavailable` naming the host and port (or the file) and
    the driver's reason, with the password taken out wherever the driver quoted it."""
    from sqlalchemy.exc import DBAPIError

    try:
        with engine.connect():
            pass
    except DBAPIError as exc:
        raise unreachable(engine.url, exc) from exc


def unreachable(url: URL, exc: BaseException) -> Unavailable:
    """The :class:`~tomo.errors.Unavailable` for a failed connection to ``url``: one line, no password."""
    orig = getattr(exc, "orig", None) or exc
    lines = [ln.strip() for ln in str(orig).splitlines() if ln.strip()]
    reason = lines[0] if lines else type(orig).__name__
    # libpq: 'connection failed: connection to server at "h", port 1 failed: FATAL:  the reason'; the host and port
    # are said once, in tomo's words, so only the reason is kept
    reason = reason.rsplit(" failed: ", 1)[-1].removeprefix("FATAL:").strip() or reason
    if url.password:
        reason = reason.replace(str(url.password), "***")
    if url.get_backend_name() == "sqlite":
        return Unavailable(f"cannot open the SQLite store {where(url)}: {reason}",
                           hint="check that the file's folder exists and that you may write there, or give --db")
    return Unavailable(f"cannot connect to the database at {where(url)} ({url.get_backend_name()}): {reason}",
                       hint=f"start the server there, or point --db (or {STORE_ENV}) at one that answers, e.g. "
                            "postgresql://USER@HOST:PORT/DB")


def connect(url: str, **engine_options: Any) -> Engine:
    """An engine for ``url``. SQLite gets WAL and synchronous FULL so a commit survives a crash of the process."""
    try:
        from sqlalchemy import create_engine, event
        from sqlalchemy.exc import ArgumentError
    except ImportError as exc:  # pragma: no cover - sqlalchemy is a core dependency
        raise ConfigError("SQLAlchemy is not installed", hint="pip install sqlalchemy") from exc
    if url.startswith("postgresql") and "connect_timeout" not in url and "PGCONNECT_TIMEOUT" not in os.environ:
        engine_options.setdefault("connect_args", {}).setdefault("connect_timeout", CONNECT_TIMEOUT_S)
    try:
        engine = create_engine(url, **engine_options)
    except (ArgumentError, ImportError) as exc:
        raise ConfigError(f"cannot open the store {url!r}: {exc}",
                          hint="use sqlite:///PATH or postgresql+psycopg://USER@HOST/DB") from exc
    if engine.dialect.name == "sqlite":

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=FULL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=10000")
            cursor.close()

    return engine
