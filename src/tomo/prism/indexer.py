"""Build or refresh the index: stat every file, re-parse only what changed, drop what disappeared.

A file is unchanged when its mtime and size match the index (no read at all); when they differ its content hash
decides. Parsing runs in worker processes once there is enough work to pay for them; the parent only writes rows.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from tomo.prism import pyextract, tags
from tomo.prism.files import SourceFile, walk
from tomo.prism.store import build_indexes

PARALLEL_MIN_FILES = 150  # below this, forking workers costs more than it saves
CHUNK = 32

Progress = Callable[[int, int], None]


@dataclass
class IndexStats:
    files: int = 0
    parsed: int = 0
    skipped: int = 0
    removed: int = 0
    seconds: float = 0.0
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, message) for files that did not parse


Parsed = tuple[str, str, str | None, bytes, list[tuple[Any, ...]], list[tuple[str, bytes]]]


def file_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def parse_file(root: str, f: SourceFile) -> Parsed:
    """Read, hash and extract one file (runs in a worker). Returns marshal-ready rows; never raises on bad source."""
    try:
        with open(os.path.join(root, f.path), "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return f.path, "", f"unreadable: {exc}", b"", [], []
    h = file_hash(data)
    try:
        if f.language == "python":
            facts = pyextract.extract(data, f.module, f.is_pkg, f.path)
        else:
            facts = tags.extract(data, f.module, f.language)
    except Exception as exc:  # a grammar bug must not stop the index: record the file as an error
        return f.path, h, f"extractor failed: {type(exc).__name__}: {exc}", b"", [], []
    defs = [(d[0], d[1], d[2], d[3], d[4], d[5], d[6], marshal.dumps(d[7])) for d in facts["defs"]]
    refs = [(name, marshal.dumps(occ)) for name, occ in facts["refs"].items()]
    return f.path, h, facts["error"], marshal.dumps(facts["info"]), defs, refs


def _parse_chunk(args: tuple[str, list[SourceFile]]) -> list[Parsed]:
    root, files = args
    return [parse_file(root, f) for f in files]


def refresh(root: Path, conn: sqlite3.Connection, fresh: bool, progress: Progress | None = None,
            workers: int | None = None) -> IndexStats:
    t0 = time.perf_counter()
    stats = IndexStats()
    unreadable: list[str] = []
    files = walk(str(root), unreadable)
    stats.files = len(files)
    known: dict[str, tuple[int, int, int, str]] = {
        r[0]: (r[1], r[2], r[3], r[4]) for r in conn.execute("SELECT path, id, mtime_ns, size, hash FROM files")
    }
    todo: list[SourceFile] = []
    for f in files:
        k = known.get(f.path)
        if k is not None and k[1] == f.mtime_ns and k[2] == f.size:
            stats.skipped += 1
        else:
            todo.append(f)
    present = {f.path for f in files}
    gone = [(known[p][0],) for p in known if p not in present]
    by_path = {f.path: f for f in todo}

    conn.execute("BEGIN")
    try:
        if gone:
            _delete(conn, gone)
            stats.removed = len(gone)
        done = 0
        for parsed in _parse_all(str(root), todo, workers):
            path, h, error, info, defs, refs = parsed
            f = by_path[path]
            k = known.get(path)
            done += 1
            if progress is not None:
                progress(done, len(todo))
            if k is not None and h and k[3] == h:  # touched, not changed
                conn.execute("UPDATE files SET mtime_ns=?, size=? WHERE id=?", (f.mtime_ns, f.size, k[0]))
                stats.skipped += 1
                continue
            if k is not None:
                _delete(conn, [(k[0],)])
            cur = conn.execute(
                "INSERT INTO files(path, mtime_ns, size, hash, lang, module, import_name, is_pkg, error, info)"
                " VALUES(?,?,?,?,?,?,?,?,?,?)",
                (path, f.mtime_ns, f.size, h, f.language, f.module, f.import_name, int(f.is_pkg), error, info))
            fid = cur.lastrowid
            conn.executemany("INSERT INTO defs VALUES(?,?,?,?,?,?,?,?,?)", [(fid, *d) for d in defs])
            conn.executemany("INSERT INTO refs VALUES(?,?,?)", [(fid, n, b) for n, b in refs])
            stats.parsed += 1
        if fresh:
            build_indexes(conn)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    stats.errors = [(r[0], r[1]) for r in conn.execute(
        "SELECT path, error FROM files WHERE error IS NOT NULL ORDER BY path")]
    stats.errors += [(path, "not indexed: the file name is not valid UTF-8 (rename it to index it)")
                     for path in unreadable]
    stats.seconds = time.perf_counter() - t0
    return stats


def _delete(conn: sqlite3.Connection, ids: list[tuple[int]]) -> None:
    conn.executemany("DELETE FROM defs WHERE file_id=?", ids)
    conn.executemany("DELETE FROM refs WHERE file_id=?", ids)
    conn.executemany("DELETE FROM files WHERE id=?", ids)


def _parse_all(root: str, todo: list[SourceFile], workers: int | None) -> Iterator[Parsed]:
    n = workers if workers is not None else (os.cpu_count() or 1)
    if n <= 1 or len(todo) < PARALLEL_MIN_FILES:
        for f in todo:
            yield parse_file(root, f)
        return
    # big files first so the last chunk is not one huge file on one core; chunks keep IPC overhead low
    order = sorted(todo, key=lambda f: -f.size)
    chunks = [(root, order[i : i + CHUNK]) for i in range(0, len(order), CHUNK)]
    # fork is fastest, but forking a process that runs other threads (a web server, an MCP host) can deadlock
    methods = _start_methods()
    if "fork" in methods and threading.active_count() == 1:
        method = "fork"
    else:
        method = "forkserver" if "forkserver" in methods else "spawn"
    done = 0
    try:
        with ProcessPoolExecutor(max_workers=n, mp_context=get_context(method)) as pool:
            for batch in pool.map(_parse_chunk, chunks):
                done += 1
                yield from batch
    except (BrokenProcessPool, OSError):
        # A worker could not start or died (forkserver/spawn re-import a __main__ that is not importable, such as
        # `python -`; the machine is out of processes): the index is still built, in this process.
        for chunk in chunks[done:]:
            yield from _parse_chunk(chunk)


def _start_methods() -> list[str]:
    import multiprocessing

    return multiprocessing.get_all_start_methods()
