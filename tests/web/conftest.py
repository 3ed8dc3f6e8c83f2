"""Fixtures for the console: a store on SQLite and on PostgreSQL (the same tests run on both), a real uvicorn server
on loopback for an app, and logged-in HTTP clients.

PostgreSQL is a throwaway cluster started here in a temporary directory on a free port (never 5432) from the
binaries in /usr/lib/postgresql/*/bin. Where they are missing the PostgreSQL cases skip with the reason, except on
CI (``CI`` set), where they FAIL: the console must be proven on both stores where it is supposed to be.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from web_support import Server, free_port

IN_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _pg_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def _missing(reason: str) -> None:
    if IN_CI:
        pytest.fail(f"{reason}; CI must run the console's PostgreSQL tests: apt-get install postgresql")
    pytest.skip(reason)


class PostgresCluster:
    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="tomo-web-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.as_root = os.geteuid() == 0
        if self.as_root:  # initdb refuses to run as root: the cluster belongs to the postgres user
            shutil.chown(self.root, "postgres", "postgres")

    def _run(self, *args: str) -> None:
        cmd = [str(self.bindir / args[0]), *args[1:]]
        if self.as_root:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        subprocess.run(cmd, check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8")
        opts = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "log"), "-o", opts, "-w", "start")

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, db: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{db}"

    def admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres",
                             autocommit=True) as conn:
            conn.execute(sql)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresCluster]:
    bindir = _pg_bin()
    if bindir is None:
        _missing("PostgreSQL is not installed (/usr/lib/postgresql/*/bin/initdb)")
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        _missing("running as root without runuser, so initdb cannot run as the postgres user")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _missing("psycopg is not installed (pip install 'tomo[web]')")
    assert bindir is not None
    cluster = PostgresCluster(bindir)
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


