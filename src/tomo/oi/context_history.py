"""The repository's history, one more weak signal for the context pack: past commits that said what the task says.

A task about a bug in some feature is likely about the files that earlier commits on that feature touched. The last
``MAX_COMMITS`` commits reachable from the tree's commit are read once (``git log --name-only``), their messages
tokenized like the code (:func:`tomo.oi.context_search.tokens`) into an FTS5 table of the pack's cache
(``ROOT/.tomo/context.sqlite``, keyed by the commit's hash), so a warm pack pays one query, not a ``git log``. Each
commit that matches the task (BM25) votes for the files it touched: its share falls with its rank among the matches
and is split among the code files it touched, so a sweeping commit (a reformat, a rename across the tree) counts
little for any one file.

Only commits *reachable from the given revision* are read, and the log's first commit is checked to be that revision:
history written after the tree's commit (the fix of the very task, in a benchmark) would leak the answer.

Git is optional: no repository, a shallow clone, a missing ``git`` or one that fails gives no signal and a note at
most, never an error.
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
from collections import defaultdict
from collections.abc import Callable, Container
from dataclasses import dataclass
from pathlib import Path

from tomo.oi.context_search import tokens

SCHEMA = "history-1"
MAX_COMMITS = 5000
GIT_TIMEOUT = 30.0  # seconds for one git command; a repository that slow gives no signal rather than a stall
_HEX40 = re.compile(r"[0-9a-f]{40}")
_REC, _SEP = "\x1e", "\x1f"
_RECORD = re.compile(f"{_REC}(?=[0-9a-f]{{40}}{_SEP})")  # a record's start (a message may hold the separator)


class HistoryError(Exception):
    """Why there is no history signal (said in ``Pack.notes``, never raised out of :func:`open_history`)."""


@dataclass(frozen=True)
class Commit:
    sha: str
    message: str
    files: tuple[str, ...]


Runner = Callable[[list[str]], str]  # runs git with these arguments, returns stdout; raises HistoryError on failure


class History:
    """The parsed log of one commit's history, in the pack's cache; :meth:`votes` ranks files for a task."""

    def __init__(self, conn: sqlite3.Connection, commit: str) -> None:
        self.conn = conn
        self.commit = commit  # the revision the log was read from (its first commit), a full hash

    def votes(self, task: str, known: Container[str], *, top: int = 50, decay: float = 0.0,
              spread: float = 1.0, is_test: Callable[[str], bool] | None = None) -> dict[str, float]:
        """Files voted for by the ``top`` commits whose messages best match ``task``: path -> score.

        A commit's vote is its BM25 score relative to the best match, times ``1 / (1 + decay * rank)``, divided by
        (number of code files it touched) ** ``spread``. Only files in ``known`` (the files in the tree the pack
        indexed) get votes; test files (``is_test``) get theirs but do not dilute the code files' share.
        """
        terms = list(dict.fromkeys(tokens(task)))[:400]
        if not terms:
            return {}
        match = " OR ".join(f'"{t}"' for t in terms)
        rows = self.conn.execute(
            "SELECT c.files, -bm25(hist_fts) FROM hist_fts JOIN hist_commits c ON c.id=hist_fts.rowid"
            " WHERE hist_fts MATCH ? ORDER BY bm25(hist_fts) LIMIT ?", (match, top)).fetchall()
        out: dict[str, float] = defaultdict(float)
        best = max((s for _f, s in rows), default=0.0)
        if best <= 0:
            return {}
        for rank, (files, s) in enumerate(rows):
            paths = [p for p in files.split("\n") if p in known]
            code = [p for p in paths if is_test is None or not is_test(p)]
            if not paths or s <= 0:
                continue
            share = (s / best) / (1.0 + decay * rank) / max(1, len(code)) ** spread
            for p in paths:
                out[p] += share
        return dict(out)


def open_history(conn: sqlite3.Connection, root: Path, *, git_dir: str | os.PathLike[str] | None = None,
                 rev: str | None = None, runner: Runner | None = None) -> tuple[History | None, str | None]:
    """The history of ``rev`` (default ``HEAD``) for the tree at ``root``: (History, None), or (None, a note or None).

    ``git_dir`` is the repository's git directory when the tree is not a checkout (an extracted archive); without it
    ``root/.git`` is used when present (git runs with ``-C root``), and a tree without one has no history: the note
    says so (the history was asked for; silence would read as "no past commit matched").
    ``conn`` is the pack's cache (``.tomo/context.sqlite``): a commit read before is not read again.
    """
    if git_dir is None and not (root / ".git").exists():
        return None, (f"git history not used: {root} is not a git checkout (it has no .git); pass --git-dir DIR "
                      "with the repository's git directory to read its history")
    gdir = Path(git_dir) if git_dir is not None else _git_dir_of(root)
    run = runner or _runner(["git", "--git-dir", str(git_dir)] if git_dir is not None else ["git", "-C", str(root)])
    name = rev or "HEAD"
    try:
        _schema(conn)
        # read from the git directory's files when it can be (a warm pack runs no git), else asked of git
        want = _resolve(gdir, name.lower() if _HEX40.fullmatch(name.lower()) else name)
        if want is None:
            want = run(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{name}^{{commit}}"]).strip()
            if not _HEX40.fullmatch(want):
                raise HistoryError(f"{name} is not a commit")
        if _cached(conn) == want:
            return History(conn, want), None
        if _is_shallow(gdir) if gdir is not None else run(["rev-parse", "--is-shallow-repository"]).strip() == "true":
            raise HistoryError("the repository is a shallow clone")
        commits = read_log(run, want)
        _store(conn, want, commits)
        return History(conn, want), None
    except HistoryError as exc:
        return None, f"git history not used: {exc}"
    except sqlite3.Error as exc:
        return None, f"git history not used: cache: {exc}"


def read_log(run: Runner, commit: str, limit: int = MAX_COMMITS) -> list[Commit]:
    """The last ``limit`` commits reachable from ``commit`` (a full hash), newest first, with the files each touched.

    Raises :class:`HistoryError` unless the log starts at ``commit`` itself: only history up to the tree's commit may
    be read (a later commit could be the very change the task asks for). Merges list no files, so they vote for none.
    """
    out = run(["-c", "core.quotepath=off", "log", f"-n{limit}", "--no-renames", "--name-only",
               f"--format={_REC}%H{_SEP}%B{_SEP}", commit, "--"])
    commits: list[Commit] = []
    for rec in _RECORD.split(out)[1:]:
        sha, message, names = [*rec.split(_SEP, 2), "", ""][:3]
        commits.append(Commit(sha.strip(), message.strip(),
                              tuple(n for n in (x.strip() for x in names.split("\n")) if n)))
    # `git log REV` starts its walk at REV: the first record is REV itself, the rest are its ancestors
    if not commits or commits[0].sha != commit:
        raise HistoryError(f"the log was not read from {commit}")
    return commits


def _runner(base: list[str]) -> Runner:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}

    def run(args: list[str]) -> str:
        try:
            done = subprocess.run([*base, *args], capture_output=True, env=env, timeout=GIT_TIMEOUT, check=False)
        except FileNotFoundError as exc:
            raise HistoryError("git is not installed") from exc
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise HistoryError(f"git failed: {type(exc).__name__}") from exc
        if done.returncode != 0:
            msg = done.stderr.decode("utf-8", "replace").strip().splitlines()
            verb = args[2] if args[0] == "-c" else args[0]
            raise HistoryError(f"git {verb} failed: {msg[-1] if msg else done.returncode}")
        return done.stdout.decode("utf-8", "replace")

    return run


def _git_dir_of(root: Path) -> Path | None:
    """``root/.git`` as a directory, or the one a ``gitdir:`` file points to (a worktree); None when unreadable."""
    dot = root / ".git"
    if dot.is_dir():
        return dot
    try:
        line = dot.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not line.startswith("gitdir:"):
        return None
    target = Path(line[len("gitdir:"):].strip())
    return target if target.is_absolute() else root / target


def _common_dir(gdir: Path) -> Path:
    """Where refs and objects live: a worktree's git directory names it in ``commondir``."""
    try:
        common = (gdir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return gdir
    p = Path(common)
    return p if p.is_absolute() else gdir / p


def _resolve(gdir: Path | None, rev: str) -> str | None:
    """``rev`` as a full hash read from the git directory's files (HEAD, a branch), with no git process; None when
    that takes git (a tag, ``HEAD~2``, an abbreviated hash, an unreadable layout). A full hash is taken as given:
    the log checks that it starts there."""
    if _HEX40.fullmatch(rev):
        return rev
    if gdir is None:
        return None
    name = rev
    for _ in range(5):  # HEAD -> refs/heads/main -> hash (symbolic refs nest little)
        if name == "HEAD":
            path = gdir / "HEAD"
        elif name.startswith("refs/"):
            path = gdir / name if (gdir / name).exists() else _common_dir(gdir) / name
        else:
            return None
        try:
            text = path.read_text(encoding="utf-8").strip()
        except OSError:
            return _packed_ref(_common_dir(gdir), name)
        if _HEX40.fullmatch(text):
            return text
        if not text.startswith("ref:"):
            return None
        name = text[4:].strip()
    return None


def _packed_ref(common: Path, name: str) -> str | None:
    try:
        lines = (common / "packed-refs").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in lines:
        sha, _, ref = line.partition(" ")
        if ref == name and _HEX40.fullmatch(sha):
            return sha
    return None


def _is_shallow(gdir: Path) -> bool:
    return (gdir / "shallow").exists() or (_common_dir(gdir) / "shallow").exists()


def _schema(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE IF NOT EXISTS hist_meta(key TEXT PRIMARY KEY, value TEXT)")
    row = conn.execute("SELECT value FROM hist_meta WHERE key='schema'").fetchone()
    if row is None or row[0] != SCHEMA:
        conn.execute("DROP TABLE IF EXISTS hist_commits")
        conn.execute("DROP TABLE IF EXISTS hist_fts")
        conn.execute("DELETE FROM hist_meta")
        conn.execute("INSERT INTO hist_meta VALUES('schema', ?)", (SCHEMA,))
    conn.execute("CREATE TABLE IF NOT EXISTS hist_commits(id INTEGER PRIMARY KEY, sha TEXT, files TEXT)")
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS hist_fts USING fts5(body, tokenize='unicode61')")


def _cached(conn: sqlite3.Connection) -> str | None:
    row = conn.execute("SELECT value FROM hist_meta WHERE key='commit'").fetchone()
    return row[0] if row else None


def _store(conn: sqlite3.Connection, commit: str, commits: list[Commit]) -> None:
    """Replace the cached log with ``commit``'s (one history per cache: a tree is at one commit at a time)."""
    in_tx = conn.in_transaction
    if not in_tx:
        conn.execute("BEGIN")
    try:
        conn.execute("DELETE FROM hist_commits")
        conn.execute("DELETE FROM hist_fts")
        conn.executemany("INSERT INTO hist_commits(id, sha, files) VALUES(?, ?, ?)",
                         ((i, c.sha, "\n".join(c.files)) for i, c in enumerate(commits)))
        conn.executemany("INSERT INTO hist_fts(rowid, body) VALUES(?, ?)",
                         ((i, " ".join(tokens(c.message))) for i, c in enumerate(commits)))
        conn.execute("INSERT OR REPLACE INTO hist_meta VALUES('commit', ?)", (commit,))
        if not in_tx:
            conn.execute("COMMIT")
    except BaseException:
        if not in_tx:
            conn.execute("ROLLBACK")
        raise
