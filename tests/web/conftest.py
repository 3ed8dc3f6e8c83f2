"""Fixtures for the console: a store on SQLite and on PostgreSQL (the same tests run on both), a real uvicorn server
on loopback for an app, and logged-in HTTP clients.

PostgreSQL is a throwaway cluster started here in a temporary directory on a free port (never 5432) from the
binaries in /usr/lib/postgresql/*/bin. Where they are missing the PostgreSQL cases skip with the reason, except on
CI (``CI`` set), where they FAIL: the console must be proven on both stores where it is supposed to be.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from web_support import Server

from pg_cluster import PostgresCluster, pg_bindir

IN_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _missing(reason: str) -> None:
    if IN_CI:
        pytest.fail(f"{reason}; CI must run the console's PostgreSQL tests: apt-get install postgresql")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresCluster]:
    bindir = pg_bindir()
    if bindir is None:
        _missing("PostgreSQL is not installed (/usr/lib/postgresql/*/bin/initdb)")
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        _missing("running as root without runuser, so initdb cannot run as the postgres user")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _missing("psycopg is not installed (pip install 'tomo[web]')")
    assert bindir is not None
    cluster = PostgresCluster(bindir, prefix="tomo-web-pg-")
    cluster.start()
    yield cluster
    cluster.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty store: a SQLite file, or a new database in the session's PostgreSQL cluster."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'console.sqlite'}"
        return
    cluster: PostgresCluster = request.getfixturevalue("postgres")
    name = "t_" + uuid.uuid4().hex[:12]
    cluster.admin(f"CREATE DATABASE {name}")
    yield cluster.url(name)
    cluster.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def store(store_url: str) -> Iterator[Any]:
    from argon2 import PasswordHasher

    from tomo.store.console import ConsoleStore

    # real argon2id, at a cost a loaded 2-core test machine affords (the default costs ~0.7 s a hash there)
    console = ConsoleStore.open(store_url, hasher=PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
    console.create_schema()
    yield console
    console.close()


@pytest.fixture
def serve() -> Iterator[Callable[..., Server]]:
    """``serve(store, **create_app_options)`` -> a running :class:`Server`; stopped at the end of the test."""
    from tomo.web import create_app

    running: list[Server] = []

    def start(console: Any, **options: Any) -> Server:
        server = Server(create_app(console, **options)).__enter__()
        running.append(server)
        return server

    yield start
    for server in running:
        server.__exit__()


