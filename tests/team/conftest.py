"""Fixtures for the team tests: a throwaway PostgreSQL 15 cluster for the scale-out tests.

The cluster lives in a temp directory on a free port (never 5432), started with the Debian binaries under
/usr/lib/postgresql/*/bin (as the ``postgres`` user when the tests run as root, since initdb refuses root). Where
PostgreSQL or the dbos package is missing the tests that need them skip with the reason -- except under CI=true,
where they FAIL: the scale-out test must never be silently skipped where it is supposed to run.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from team_support import require, require_dbos


def _bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    """A SQLAlchemy URL of a fresh PostgreSQL cluster (database ``postgres``, user ``postgres``, trust auth)."""
    require_dbos()
    bindir = _bindir()
    require(bindir is not None, "PostgreSQL is not installed", "apt-get install postgresql")
    assert bindir is not None
    base = Path(tempfile.mkdtemp(prefix="tomo-team-pg-", dir="/tmp"))
    data, sockets = base / "data", base / "sock"
    sockets.mkdir()
    as_user: list[str] = []
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            owner = pwd.getpwnam("nobody")
        for path in (base, sockets):
            os.chown(path, owner.pw_uid, owner.pw_gid)
        as_user = ["runuser", "-u", owner.pw_name, "--"]
    port = _free_port()
    subprocess.run([*as_user, str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E",
                    "UTF8", "--no-instructions"], check=True, capture_output=True, timeout=120)
    options = f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c max_connections=200"
    started = subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l",
                              str(base / "log"), "-w", "-t", "60", "start"], capture_output=True, text=True,
                             timeout=120)
    if started.returncode != 0:
        log = (base / "log").read_text() if (base / "log").exists() else ""
        pytest.fail(f"PostgreSQL did not start: {started.stderr}\n{log}")
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True, timeout=60)
        shutil.rmtree(base, ignore_errors=True)
