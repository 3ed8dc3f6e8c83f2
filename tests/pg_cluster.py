"""A throwaway PostgreSQL cluster for the tests that prove a store on PostgreSQL (console, team scale-out, the
distributed lab): a temporary directory, a free port (never 5432), the Debian binaries under /usr/lib/postgresql/*/bin,
run as the ``postgres`` user when the tests run as root (initdb refuses root). One module, imported by each folder's
fixture: a fixture does not cross sibling folders, and each folder decides how a missing PostgreSQL is reported."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path


def pg_bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PostgresCluster:
    """``start()``, ``url(db)``, ``admin(sql)``, ``stop()``: initdb and pg_ctl failures raise CalledProcessError."""

    def __init__(self, bindir: Path, prefix: str = "tomo-pg-") -> None:
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix=prefix))
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
