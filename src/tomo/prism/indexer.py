"""Build or refresh the index: stat every file, re-parse only what changed, drop what disappeared.

A file is unchanged when its mtime and size match the index (no read at all); when they differ its content hash
decides. Parsing runs in worker processes once there is enough work to pay for them; the parent only writes rows.
"""

from __future__ import annotations

import gc
import hashlib
import marshal
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tomo.prism import pyextract, tags
from tomo.prism.files import BINARY_PROBE, SourceFile, is_binary, walk
from tomo.prism.store import build_indexes

BINARY = f"not indexed: binary (a NUL byte in its first {BINARY_PROBE // 1024} KiB)"
PARALLEL_MIN_FILES = 150  # below this, forking workers costs more than it saves
CHUNK = 32

Progress = Callable[[int, int], None]


# The phases of an index, in order. read (with hash), parse, query, extract and encode are the parsing's, in CPU
# seconds summed over the worker processes; walk, hash (touched files compared by content), delete (the rows of
# changed and vanished files), wait (for workers), write and index-build are the indexing process's, in wall
# seconds. Nothing is resolved at index time: bindings are resolved when a query asks (resolve.py).
PHASES = ("walk", "hash", "delete", "read", "parse", "query", "extract", "encode", "wait", "write", "index-build")
WORKER_PHASES = frozenset({"read", "parse", "query", "extract", "encode"})


@dataclass
class IndexStats:
    files: int = 0
    parsed: int = 0
    skipped: int = 0
    removed: int = 0
    seconds: float = 0.0
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, message) for files that did not parse
    workers: int = 1  # processes that parsed (1: the indexing process itself)
    seeded_from: str | None = None  # the checkout whose index this one started as a copy of (store.seed)
    # seconds per phase that ran (see PHASES)
    phases: dict[str, float] = field(default_factory=dict)


# One chunk's rows, ready for executemany: files, defs, refs (file ids assigned by the parent before parsing)
Rows = tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[tuple[Any, ...]]]
Task = tuple[str, list[tuple[int, SourceFile]]]


def file_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _parse_chunk(task: Task) -> tuple[bytes, dict[str, float]]:
    """Read, hash and extract a chunk of files (runs in a worker): its rows, marshalled in one blob, and its times.

    Never raises on bad source: a file that cannot be read or extracted is a files row with the error. The cyclic
    garbage collector is paused meanwhile: extraction allocates millions of small objects that form no cycles and
    die with the chunk, and the collector would walk them again and again (a tenth of the chunk's time).
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        return _parse_files(*task)
    finally:
        if paused:
            gc.enable()


def _parse_files(root: str, files: list[tuple[int, SourceFile]]) -> tuple[bytes, dict[str, float]]:
    frows: list[tuple[Any, ...]] = []
    drows: list[tuple[Any, ...]] = []
    rrows: list[tuple[Any, ...]] = []
    t_read = t_parse = t_query = t_extract = t_encode = 0.0
    clock = time.process_time  # CPU seconds: a loaded machine inflates wall time, not these
    dumps = marshal.dumps
    for fid, f in files:
        t0 = clock()
        try:
            with open(os.path.join(root, f.path), "rb") as fh:
                data = fh.read()
        except OSError as exc:
            frows.append(_file_row(fid, f, "", f"unreadable: {exc}", b""))
            continue
        h = file_hash(data)
        t1 = clock()
        t_read += t1 - t0
        if is_binary(data):  # a .py that is not source (a blob, a compiled file renamed): nothing in it is a name
            frows.append(_file_row(fid, f, h, BINARY, b""))
            continue
        try:
            if f.language == "python":
                tree = pyextract.parse(data)
                t2 = clock()
                caps = pyextract.captures(tree)
                t3 = clock()
                facts = pyextract.facts(data, f.module, f.is_pkg, tree, caps)
                del tree, caps
                t_parse += t2 - t1
                t_query += t3 - t2
                t1 = t3
            else:
                facts = tags.extract(data, f.module, f.language)
        except Exception as exc:  # a grammar bug must not stop the index: record the file as an error
            frows.append(_file_row(fid, f, h, f"extractor failed: {type(exc).__name__}: {exc}", b""))
            continue
        t4 = clock()
        t_extract += t4 - t1
        frows.append(_file_row(fid, f, h, facts["error"], dumps(facts["info"])))
        drows += [(fid, d[0], d[1], d[2], d[3], d[4], d[5], d[6], dumps(d[7])) for d in facts["defs"]]
        rrows += [(fid, name, dumps(occ)) for name, occ in facts["refs"].items()]
        t_encode += clock() - t4
    t0 = clock()
    blob = marshal.dumps((frows, drows, rrows))
    t_encode += clock() - t0
    return blob, {"read": t_read, "parse": t_parse, "query": t_query, "extract": t_extract, "encode": t_encode}


def _file_row(fid: int, f: SourceFile, h: str, error: str | None, info: bytes) -> tuple[Any, ...]:
    return (fid, f.path, f.mtime_ns, f.size, h, f.language, f.module, f.import_name, int(f.is_pkg), error, info)


def refresh(root: Path, conn: sqlite3.Connection, fresh: bool, progress: Progress | None = None,
            workers: int | None = None) -> IndexStats:
    t0 = time.perf_counter()
    stats = IndexStats()
    phases = stats.phases
    unreadable: list[str] = []
    files = walk(str(root), unreadable)
    stats.files = len(files)
    known: dict[str, tuple[int, int, int, str]] = {
        r[0]: (r[1], r[2], r[3], r[4]) for r in conn.execute("SELECT path, id, mtime_ns, size, hash FROM files")
    }
    changed: list[SourceFile] = []
    todo: list[SourceFile] = []
    for f in files:
        k = known.get(f.path)
        if k is None:
            todo.append(f)
        elif k[1] != f.mtime_ns or k[2] != f.size:
            changed.append(f)
        else:
            stats.skipped += 1
    present = {f.path for f in files}
    gone = [(known[p][0],) for p in known if p not in present]
    stats.removed = len(gone)
    t1 = time.perf_counter()
    phases["walk"] = t1 - t0

    conn.execute("BEGIN")
    try:
        # a touched file (mtime changed, same size) is compared by content before anything is parsed: a checkout
        # or a build that rewrites files unchanged costs a read and a hash, not a parse
        touched: list[tuple[int, int, int]] = []
        for f in changed:
            k = known[f.path]
            if k[2] == f.size and k[3] and _same_content(str(root), f.path, k[3]):
                touched.append((f.mtime_ns, f.size, k[0]))
            else:
                gone.append((k[0],))
                todo.append(f)
        stats.skipped += len(touched)
        conn.executemany("UPDATE files SET mtime_ns=?, size=? WHERE id=?", touched)
        t2 = time.perf_counter()
        phases["hash"] = t2 - t1
        if gone:
            _delete(conn, gone)
            phases["delete"] = time.perf_counter() - t2
        n_workers, results = _parse_all(str(root), todo, workers, _next_id(conn))
        stats.workers = n_workers
        wait = write = 0.0
        ndone = 0
        t_wait = time.perf_counter()
        for blob, times in results:
            t_got = time.perf_counter()
            wait += t_got - t_wait
            frows, drows, rrows = marshal.loads(blob)
            conn.executemany("INSERT INTO files(id, path, mtime_ns, size, hash, lang, module, import_name, is_pkg,"
                             " error, info) VALUES(?,?,?,?,?,?,?,?,?,?,?)", frows)
            conn.executemany("INSERT INTO defs VALUES(?,?,?,?,?,?,?,?,?)", drows)
            conn.executemany("INSERT INTO refs VALUES(?,?,?)", rrows)
            for phase, secs in times.items():
                phases[phase] = phases.get(phase, 0.0) + secs
            ndone += len(frows)
            stats.parsed += len(frows)
            if progress is not None:
                progress(ndone, len(todo))
            t_wait = time.perf_counter()
            write += t_wait - t_got
        phases["wait"] = wait
        phases["write"] = write
        if fresh:
            t3 = time.perf_counter()
            build_indexes(conn)
            phases["index-build"] = time.perf_counter() - t3
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


def _same_content(root: str, path: str, known_hash: str) -> bool:
    try:
        with open(os.path.join(root, path), "rb") as fh:
            return file_hash(fh.read()) == known_hash
    except OSError:
        return False


def _next_id(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT max(id) FROM files").fetchone()
    return (row[0] or 0) + 1


def _delete(conn: sqlite3.Connection, ids: list[tuple[int]]) -> None:
    conn.executemany("DELETE FROM defs WHERE file_id=?", ids)
    conn.executemany("DELETE FROM refs WHERE file_id=?", ids)
    conn.executemany("DELETE FROM files WHERE id=?", ids)


def _parse_all(root: str, todo: list[SourceFile], workers: int | None,
               first_id: int) -> tuple[int, Iterator[tuple[bytes, dict[str, float]]]]:
    """(processes used, the chunks' results as they come). File ids follow path order, whatever the chunk order."""
    ided = list(enumerate(todo, first_id))
    n = workers if workers is not None else (os.cpu_count() or 1)
    if n <= 1 or len(todo) < PARALLEL_MIN_FILES:
        return 1, (_parse_chunk((root, ided[i : i + CHUNK])) for i in range(0, len(ided), CHUNK))
    # big files first so the last chunk is not one huge file on one core; chunks keep IPC overhead low
    order = sorted(ided, key=lambda e: -e[1].size)
    chunks = [(root, order[i : i + CHUNK]) for i in range(0, len(order), CHUNK)]
    return n, _parallel(chunks, n)


def _parallel(chunks: list[Task], n: int) -> Iterator[tuple[bytes, dict[str, float]]]:
    # (imported here: a warm refresh, what every query starts with, parses nothing and needs no process pool)
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool
    from multiprocessing import get_context

    # fork is fastest, but forking a process that runs other threads (a web server, an MCP host) can deadlock
    methods = _start_methods()
    if "fork" in methods and threading.active_count() == 1:
        method = "fork"
    else:
        method = "forkserver" if "forkserver" in methods else "spawn"
    done = 0
    try:
        with ProcessPoolExecutor(max_workers=n, mp_context=get_context(method)) as pool:
            for result in pool.map(_parse_chunk, chunks):
                done += 1
                yield result
    except (BrokenProcessPool, OSError):
        # A worker could not start or died (forkserver/spawn re-import a __main__ that is not importable, such as
        # `python -`; the machine is out of processes): the index is still built, in this process.
        for chunk in chunks[done:]:
            yield _parse_chunk(chunk)


def _start_methods() -> list[str]:
    import multiprocessing

    return multiprocessing.get_all_start_methods()
