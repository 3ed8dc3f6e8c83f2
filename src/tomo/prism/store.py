"""The on-disk index: one SQLite file, ``ROOT/.tomo/index.sqlite``.

Facts are stored per file (rows keyed by ``file_id``), so refreshing a file is delete-then-insert of its rows.
Per-file details that only queries need (bindings, occurrences of one name in one file) are ``marshal`` blobs:
decoding one blob is far cheaper than joining many narrow rows, and the index is a cache (rebuilt when the
schema or the Python version changes, because marshal's format is tied to it).
"""

from __future__ import annotations

import os
import sqlite3
import sys
from contextlib import closing
from pathlib import Path

SCHEMA_VERSION = "prism-16"
FINGERPRINT = f"{SCHEMA_VERSION}/py{sys.version_info[0]}.{sys.version_info[1]}"

_TABLES = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files(
    id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, mtime_ns INTEGER, size INTEGER, hash TEXT,
    lang TEXT, module TEXT, import_name TEXT, is_pkg INTEGER, error TEXT, info BLOB);
CREATE TABLE IF NOT EXISTS defs(
    file_id INTEGER, qualname TEXT, name TEXT, kind TEXT, line INTEGER, col INTEGER, end_line INTEGER,
    parent TEXT, data BLOB);
CREATE TABLE IF NOT EXISTS refs(file_id INTEGER, name TEXT, data BLOB);
"""
_INDEXES = """
CREATE INDEX IF NOT EXISTS defs_qualname ON defs(qualname);
CREATE INDEX IF NOT EXISTS defs_name ON defs(name);
CREATE INDEX IF NOT EXISTS defs_file ON defs(file_id);
CREATE INDEX IF NOT EXISTS refs_name ON refs(name);
CREATE INDEX IF NOT EXISTS refs_file ON refs(file_id);
CREATE INDEX IF NOT EXISTS files_module ON files(module);
CREATE INDEX IF NOT EXISTS files_import ON files(import_name);
"""


def index_path(root: Path) -> Path:
    return root / ".tomo" / "index.sqlite"


def state_dir(root: Path) -> Path:
    """``ROOT/.tomo``, made on first use with a ``.gitignore`` that keeps tomo's state out of the repository."""
    folder = root / ".tomo"
    folder.mkdir(parents=True, exist_ok=True)
    gitignore = folder / ".gitignore"
    if not gitignore.exists():
        gitignore.write_text("*\n")
    return folder


def _open(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA temp_store=MEMORY")
    conn.execute("PRAGMA cache_size=-64000")
    # Read the index through a memory map rather than a read() per page into this process's page cache: a fresh
    # process answers its first query with a cold cache, each lookup landing on pages it has not read yet, and
    # the kernel's time (copying those pages, faulting in the memory that holds them) was 15-20 % of a wide first
    # query's CPU time. SQLite remaps as the file grows and writes as before; its documented hazard, a fault if
    # another program truncates the file while it is mapped, needs a writer that is not SQLite (prism replaces a
    # rebuilt index by renaming, which leaves a mapped file intact).
    conn.execute(f"PRAGMA mmap_size={1 << 30}")
    return conn


def connect(root: Path) -> tuple[sqlite3.Connection, bool]:
    """Open the index, or start building a new one; returns the connection and whether it is being built fresh.

    A fresh index is written to a temporary file without a journal (nothing can read it yet) and moved into place
    by :func:`publish`: a crash mid-build leaves no half-written index behind, and the build writes every page once.
    """
    path = index_path(root)
    state_dir(root)
    if path.exists():
        try:
            conn = _open(path)
            row = conn.execute("SELECT value FROM meta WHERE key='fingerprint'").fetchone()
            if row is not None and row[0] == FINGERPRINT:
                return conn, False
            conn.close()
        except sqlite3.DatabaseError:
            pass  # an unreadable or foreign file: rebuilt below
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    tmp = _building(path)
    tmp.unlink(missing_ok=True)
    conn = sqlite3.connect(tmp, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=OFF")
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("PRAGMA cache_size=-64000")
    conn.execute("PRAGMA temp_store=MEMORY")  # the index build sorts every name: in memory, not in temp files
    conn.executescript(_TABLES)
    conn.execute("INSERT OR REPLACE INTO meta VALUES('fingerprint', ?)", (FINGERPRINT,))
    return conn, True


def _building(path: Path) -> Path:
    return path.with_name(f"{path.name}.building-{os.getpid()}")


def publish(root: Path, conn: sqlite3.Connection) -> sqlite3.Connection:
    """Move a freshly built index into place and reopen it for normal (WAL) use."""
    path = index_path(root)
    conn.close()
    os.replace(_building(path), path)
    return _open(path)


def build_indexes(conn: sqlite3.Connection) -> None:
    for stmt in _INDEXES.strip().split(";"):
        if stmt.strip():
            conn.execute(stmt)  # not executescript: that would commit the caller's transaction
    conn.execute("ANALYZE")


def seed(root: Path, source: Path) -> bool:
    """Start ROOT's index as a copy of SOURCE's, when ROOT has none and SOURCE has one this tomo can read.

    Why: a new worktree or clone of a repository holds mostly the same files as a checkout already indexed, and the
    index is keyed by path and content hash, so the refresh after the copy reads and hashes every file (their
    mtimes differ) and parses only those whose content differs: on Django 0.2 s against a cold index's 3.5 s
    (benchmarks.md, prism-index). Returns whether it copied.
    """
    return seed_state(root, source, index_path(root).name, ("fingerprint", FINGERPRINT))


def seed_state(root: Path, source: Path, name: str, meta: tuple[str, str]) -> bool:
    """Copy ``SOURCE/.tomo/NAME`` to ``ROOT/.tomo/NAME`` when ROOT has none and SOURCE's ``meta`` table holds
    ``meta`` (key, value): how each of tomo's caches keyed by path and content hash seeds a new checkout."""
    target, origin = state_dir(root) / name, source / ".tomo" / name
    if target.exists() or not origin.is_file() or origin.resolve() == target.resolve():
        return False
    return copy_database(origin, target, meta)


def copy_database(source: Path, target: Path, meta: tuple[str, str]) -> bool:
    """Copy the SQLite database SOURCE to TARGET when its ``meta`` table holds ``meta`` (key, value); False, and
    nothing written, otherwise or when SOURCE cannot be read.

    SQLite's backup reads a consistent snapshot through SOURCE's write-ahead log while another process may be
    writing it (a file copy could take half a transaction), and TARGET appears whole or not at all.
    """
    tmp = target.with_name(f"{target.name}.copying-{os.getpid()}")
    try:
        with closing(sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True)) as src:
            row = src.execute("SELECT value FROM meta WHERE key=?", (meta[0],)).fetchone()
            if row is None or row[0] != meta[1]:
                return False
            with closing(sqlite3.connect(tmp)) as dst:
                src.backup(dst)
        os.replace(tmp, target)
        return True
    except (sqlite3.Error, OSError):
        tmp.unlink(missing_ok=True)
        return False
