"""The on-disk index: one SQLite file, ``ROOT/.tomo/index.sqlite``.

Facts are stored per file (rows keyed by ``file_id``), so refreshing a file is delete-then-insert of its rows.
Per-file details that only queries need (bindings, occurrences of one name in one file) are ``marshal`` blobs:
decoding one blob is far cheaper than joining many narrow rows, and the index is a cache (rebuilt when the
schema or the Python version changes, because marshal's format is tied to it).
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

SCHEMA_VERSION = "prism-8"
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
CREATE INDEX IF NOT EXISTS defs_parent ON defs(parent);
CREATE INDEX IF NOT EXISTS refs_name ON refs(name);
CREATE INDEX IF NOT EXISTS refs_file ON refs(file_id);
CREATE INDEX IF NOT EXISTS files_module ON files(module);
CREATE INDEX IF NOT EXISTS files_import ON files(import_name);
"""


def index_path(root: Path) -> Path:
    return root / ".tomo" / "index.sqlite"


def connect(root: Path) -> tuple[sqlite3.Connection, bool]:
    """Open (or create) the index; returns the connection and whether it is fresh (empty, indexes not built yet)."""
    path = index_path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    gitignore = path.parent / ".gitignore"
    if not gitignore.exists():
        gitignore.write_text("*\n")
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA temp_store=MEMORY")
    conn.execute("PRAGMA cache_size=-64000")
    conn.executescript(_TABLES)
    row = conn.execute("SELECT value FROM meta WHERE key='fingerprint'").fetchone()
    fresh = False
    if row is None or row[0] != FINGERPRINT:
        conn.executescript("DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS defs; DROP TABLE IF EXISTS refs;")
        conn.executescript(_TABLES)
        conn.execute("INSERT OR REPLACE INTO meta VALUES('fingerprint', ?)", (FINGERPRINT,))
        fresh = True
    elif conn.execute("SELECT count(*) FROM files").fetchone()[0] == 0:
        fresh = True
    if fresh:
        # bulk load first, index after: far faster than maintaining the indexes row by row
        for name in ("defs_qualname", "defs_name", "defs_file", "defs_parent", "refs_name", "refs_file",
                     "files_module", "files_import"):
            conn.execute(f"DROP INDEX IF EXISTS {name}")
    return conn, fresh


def build_indexes(conn: sqlite3.Connection) -> None:
    for stmt in _INDEXES.strip().split(";"):
        if stmt.strip():
            conn.execute(stmt)  # not executescript: that would commit the caller's transaction
    conn.execute("ANALYZE")
