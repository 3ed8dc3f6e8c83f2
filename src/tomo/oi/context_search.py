"""Retrieval over the repository: BM25 with identifier-aware tokens, the context pack's weaker signal.

Every source file prism indexed is tokenized once into ``ROOT/.tomo/context.sqlite`` (an SQLite FTS5 table, kept
in step with prism's index by content hash, so a warm query reads no source file). Tokens are identifier-aware:
``LabelEncoder``, ``label_encoder`` and ``labelEncoder`` all give ``labelencoder`` plus the parts ``label`` and
``encoder``, so a task that names a class in prose still meets the code that defines it.
"""

from __future__ import annotations

import functools
import math
import re
import sqlite3
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from tomo.oi.context_anchors import identifier_parts
from tomo.prism.store import seed_state, state_dir

SCHEMA = "context-2"
STATE_FILE = "context.sqlite"  # in ROOT/.tomo
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")
_STOP_WORDS = (
    "a an and are as at be but by for from has have if in into is it its of on or not no that the their then there "
    "these this to was were will with would can could should may might must do does did so such than too very we "
    "you i me my our your they them he she his her which who whom what when where why how all any both each few "
    "more most other some only own same just also use used using get set one two new old self cls def return import "
    "none true false class pass else elif try except finally raise while lambda yield with assert del global "
    "nonlocal async await print"
)
STOP = frozenset(_STOP_WORDS.split(" "))
MAX_BODY_TOKENS = 60000  # a generated megabyte file would dominate the index without saying more


def tokens(text: str) -> list[str]:
    """Identifier-aware tokens: each identifier lowercased without underscores, then its camel/snake parts."""
    out: list[str] = []
    for w in _WORD.findall(text):
        out += _word_tokens(w)
    return out


@functools.lru_cache(maxsize=200_000)
def _word_tokens(w: str) -> tuple[str, ...]:
    whole = w.replace("_", "").lower()
    if len(whole) < 2 or whole in STOP:
        return ()
    parts = identifier_parts(w)
    if len(parts) > 1:
        return (whole, *(p for p in parts if len(p) > 1 and p not in STOP))
    return (whole,)


def word_variants(t: str) -> list[str]:
    """Plain forms of an English-looking token: a light suffix strip, never shorter than four letters."""
    out = []
    for suffix, repl in (("ies", "y"), ("ing", ""), ("ing", "e"), ("ed", ""), ("ed", "e"), ("es", ""), ("s", "")):
        if t.endswith(suffix) and len(t) - len(suffix) + len(repl) >= 4:
            out.append(t[: len(t) - len(suffix)] + repl)
    return [v for v in out if v != t and v not in STOP]


def path_tokens(path: str) -> list[str]:
    return tokens(re.sub(r"\.\w+$", "", path).replace("/", " "))


def seed(root: Path, source: Path) -> bool:
    """Start ROOT's token index as a copy of SOURCE's (another checkout of the same code): it is kept in step with
    prism's index by path and content hash, so only the files that differ are tokenized again. Returns whether it
    copied (not when ROOT has one already or SOURCE has none of this schema)."""
    return seed_state(root, source, STATE_FILE, ("schema", SCHEMA))


class Retrieval:
    """The token index of one repository, refreshed from prism's ``files`` table (path and content hash)."""

    def __init__(self, root: Path, files: Iterable[tuple[str, str]]) -> None:
        self.root = root
        path = state_dir(root) / STATE_FILE
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self._schema()
        self._sync(dict(files))

    def _schema(self) -> None:
        c = self.conn
        c.execute("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT)")
        row = c.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        if row is None or row[0] != SCHEMA:
            for t in ("docs", "fts", "vocab"):
                c.execute(f"DROP TABLE IF EXISTS {t}")
            c.execute("INSERT OR REPLACE INTO meta VALUES('schema', ?)", (SCHEMA,))
        c.execute("CREATE TABLE IF NOT EXISTS docs(id INTEGER PRIMARY KEY, path TEXT UNIQUE, hash TEXT)")
        c.execute("CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(path, body, tokenize='unicode61')")
        c.execute("CREATE VIRTUAL TABLE IF NOT EXISTS vocab USING fts5vocab(fts, 'row')")

    def _sync(self, files: dict[str, str]) -> None:
        known = {p: (i, h) for i, p, h in self.conn.execute("SELECT id, path, hash FROM docs")}
        stale = [(i,) for p, (i, h) in known.items() if files.get(p) != h]
        todo = [p for p, h in files.items() if p not in known or known[p][1] != h]
        if not stale and not todo:
            return
        c = self.conn
        c.execute("BEGIN")
        try:
            c.executemany("DELETE FROM fts WHERE rowid=?", stale)
            c.executemany("DELETE FROM docs WHERE id=?", stale)
            for p in todo:
                try:
                    text = (self.root / p).read_bytes().decode("utf-8", "replace")
                except OSError:
                    text = ""
                cur = c.execute("INSERT INTO docs(path, hash) VALUES(?, ?)", (p, files[p]))
                c.execute("INSERT INTO fts(rowid, path, body) VALUES(?, ?, ?)",
                          (cur.lastrowid, " ".join(path_tokens(p)), " ".join(tokens(text)[:MAX_BODY_TOKENS])))
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise

    def close(self) -> None:
        self.conn.close()

    def search(self, query: str, limit: int = 200, path_weight: float = 2.0,
               variants: bool = False) -> list[tuple[str, float]]:
        """Files ranked by BM25 against ``query``'s tokens: (path, score), best first, score > 0.

        ``variants`` adds each prose word's plain form (``renamed`` -> ``rename``, ``fields`` -> ``field``), so
        the task's English meets the code's names without stemming the index.
        """
        terms = list(dict.fromkeys(tokens(query)))
        if variants:
            terms = list(dict.fromkeys(terms + [v for t in terms for v in word_variants(t)]))
        return self.search_terms(terms, limit, path_weight)

    def search_terms(self, terms: list[str], limit: int = 200, path_weight: float = 2.0) -> list[tuple[str, float]]:
        if not terms:
            return []
        match = " OR ".join(f'"{t}"' for t in terms[:400])
        rows = self.conn.execute(
            "SELECT d.path, -bm25(fts, ?, 1.0) AS s FROM fts JOIN docs d ON d.id=fts.rowid"
            " WHERE fts MATCH ? ORDER BY bm25(fts, ?, 1.0) LIMIT ?", (path_weight, match, path_weight, limit)
        ).fetchall()
        return [(p, s) for p, s in rows if s > 0]

    def phrase(self, text: str, limit: int = 50) -> list[str]:
        """Files whose token stream holds ``text``'s tokens in order (an error message, a log line)."""
        terms = [t for t in tokens(text)]
        if len(terms) < 2:
            return []
        match = "body: \"" + " ".join(terms[:24]) + "\""
        try:
            return [r[0] for r in self.conn.execute(
                "SELECT d.path FROM fts JOIN docs d ON d.id=fts.rowid WHERE fts MATCH ? LIMIT ?", (match, limit))]
        except sqlite3.OperationalError:
            return []

    def idf(self, terms: Iterable[str]) -> dict[str, float]:
        """Inverse document frequency of each term (BM25's), for scoring spans inside a few files."""
        uniq = list(dict.fromkeys(terms))
        n = self.conn.execute("SELECT count(*) FROM docs").fetchone()[0] or 1
        df: dict[str, int] = {}
        for i in range(0, len(uniq), 500):
            chunk = uniq[i : i + 500]
            q = f"SELECT term, doc FROM vocab WHERE term IN ({','.join('?' * len(chunk))})"
            df.update(dict(self.conn.execute(q, chunk).fetchall()))
        return {t: math.log(1 + (n - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5)) for t in uniq}


def bm25_spans(query_terms: Counter[str], spans: list[list[str]], idf: dict[str, float],
               k1: float = 1.2, b: float = 0.75) -> list[float]:
    """BM25 of each span (a function body's tokens) against the query, with the repository's idf."""
    if not spans:
        return []
    avg = sum(len(s) for s in spans) / len(spans) or 1.0
    out = []
    for s in spans:
        tf = Counter(s)
        norm = k1 * (1 - b + b * len(s) / avg)
        out.append(sum(idf.get(t, 0.0) * tf[t] * (k1 + 1) / (tf[t] + norm) for t in query_terms if t in tf))
    return out
