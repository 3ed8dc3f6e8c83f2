"""Fixtures for the team tests: a throwaway PostgreSQL 15 cluster for the scale-out tests.

The cluster lives in a temp directory on a free port (never 5432), started with the Debian binaries under
/usr/lib/postgresql/*/bin (as the ``postgres`` user when the tests run as root, since initdb refuses root). Where
PostgreSQL or the dbos package is missing the tests that need them skip with the reason -- except under CI=true,
where they FAIL: the scale-out test must never be silently skipped where it is supposed to run.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from team_support import require, require_dbos

from pg_cluster import PostgresCluster, pg_bindir


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    """A SQLAlchemy URL of a fresh PostgreSQL cluster (database ``postgres``, user ``postgres``, trust auth)."""
    require_dbos()
    bindir = pg_bindir()
    require(bindir is not None, "PostgreSQL is not installed", "apt-get install postgresql")
    assert bindir is not None
    cluster = PostgresCluster(bindir, prefix="tomo-team-pg-")
    cluster.start()
    try:
        yield cluster.url()
    finally:
        cluster.stop()
