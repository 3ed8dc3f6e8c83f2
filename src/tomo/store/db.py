"""Opening a store: SQLite (WAL, synchronous FULL, foreign keys) by default, PostgreSQL by URL.

Why here and not in each part: a job that ``tomo team`` checkpoints must be readable by ``tomo serve`` from the same
file or server, so both open it the same way. SQLAlchemy is imported lazily by the callers of this module only.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tomo.errors import ConfigError

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

STORE_ENV = "TOMO_DB"


def default_url(workspace: Path, filename: str) -> str:
    """``sqlite:///WORKSPACE/.tomo/FILENAME`` (the folder is created), unless ``TOMO_DB`` names a shared store."""
    shared = os.environ.get(STORE_ENV)
    if shared:
        return shared
    folder = workspace.resolve() / ".tomo"
    folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{folder / filename}"


def connect(url: str, **engine_options: Any) -> Engine:
    """An engine for ``url``. SQLite gets WAL and synchronous FULL so a commit survives a crash of the process."""
    try:
        from sqlalchemy import create_engine, event
        from sqlalchemy.exc import ArgumentError
    except ImportError as exc:  # pragma: no cover - sqlalchemy is a core dependency
        raise ConfigError("SQLAlchemy is not installed", hint="pip install sqlalchemy") from exc
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
