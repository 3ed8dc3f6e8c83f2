"""The code graph: open (build or refresh) the index of a repository and answer questions about its symbols.

Every answer is a plain dataclass from :mod:`tomo.prism.model`. A reference is ``confirmed`` only when the binding
was proven through scopes, imports, inheritance or a local type; everything else that could be the symbol is
reported ``ambiguous`` with the reason, and nothing is guessed.
"""

from __future__ import annotations

import difflib
import functools
import gc
import marshal
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from tomo.errors import PrismError
from tomo.prism import indexer, store
from tomo.prism.indexer import IndexStats, Progress
from tomo.prism.model import Applied, Callee, Caller, Confidence, ImpactItem, Occurrence, Plan, Reference, Symbol
from tomo.prism.otherbind import UNBOUND, OtherBinder
from tomo.prism.pyextract import ALL, CALL, DEF, IMPORT, KWARG, MODPATH, STRING, is_test_path
from tomo.prism.rename import ALIAS_REASON, apply_plan, plan_rename
from tomo.prism.resolve import Resolver, Value, same_name

SymbolLike = str | Symbol
_P = ParamSpec("_P")
_R = TypeVar("_R")
_gc_lock = threading.Lock()
_gc_paused = [0, False]  # queries running, whether the collector was enabled before the first of them


def _without_gc(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """Run a query with the cyclic garbage collector paused.

    A wide query decodes hundreds of thousands of small objects (file infos, bindings, occurrences) that live until
    it returns or stay cached with the graph, and hold no reference cycles; the collector would walk them again and
    again while they pile up: a third of a cold query's time. Re-entrant and thread-safe; the collector's state from
    before the first running query is restored when the last one returns.
    """
    @functools.wraps(fn)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with _gc_lock:
            if _gc_paused[0] == 0:
                _gc_paused[1] = gc.isenabled()
                gc.disable()
            _gc_paused[0] += 1
        try:
            return fn(*args, **kwargs)
        finally:
            with _gc_lock:
                _gc_paused[0] -= 1
                if _gc_paused[0] == 0 and _gc_paused[1]:
                    gc.enable()
    return run
_FAMILY = {"javascript": "js", "typescript": "js", "tsx": "js"}
_MEMBER_KINDS = ("method", "attribute", "variable")  # one namespace per instance: a subclass's is the same name
# What a long-lived graph (an MCP or assist session) keeps between queries is bounded: decoded facts of this many
# files (all 2,867 of Django: about 40 MB, more as their bindings get decoded), answers for this many symbols; past
# either, that cache starts over.
_MAX_FACT_FILES = 4000
_MAX_ANSWERS = 1000


class Graph:
    """A repository's code graph. ``Graph.open(root)`` builds or refreshes ``root/.tomo/index.sqlite``."""

    def __init__(self, root: Path, conn: sqlite3.Connection, stats: IndexStats) -> None:
        self.root = root
        self.conn = conn
        self.stats = stats
        self._lines: dict[str, list[bytes]] = {}  # path -> its lines, undecoded: a query quotes a few of each
        self._forget()

    def _forget(self) -> None:
        """Drop what earlier queries learnt: after a refresh, or when another connection changed the index."""
        self._lines.clear()
        self._kept: dict[str, list[bytes]] = {}  # path -> its lines as a query's source reading split them
        self._facts = Resolver(self.conn, self.root)  # the stored facts every query reads, shared by queries
        self._occ: dict[Symbol, list[Occurrence]] = {}  # answers, per symbol: valid until the index changes
        self._bare_occ: dict[Symbol, list[Occurrence]] = {}  # the same without the source lines
        self._answers: dict[tuple[Any, ...], list[Any]] = {}  # callers and impact, by symbol and arguments
        self._scopes: dict[tuple[int, str], Symbol] = {}
        self._version = self._data_version()

    def _data_version(self) -> int:
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def _current(self) -> None:
        """Forget the cached answers if another connection (another process's refresh) committed to the index."""
        if self._data_version() != self._version:
            self._forget()
        if self._facts.files_known() > _MAX_FACT_FILES:
            self._facts = Resolver(self.conn, self.root)
        if len(self._occ) + len(self._bare_occ) + len(self._answers) > _MAX_ANSWERS:
            self._occ, self._bare_occ, self._answers = {}, {}, {}

    # ---- lifecycle -------------------------------------------------------------------------------------------------

    @classmethod
    def open(cls, root: str | os.PathLike[str] = ".", *, progress: Progress | None = None,
             workers: int | None = None, seed: str | os.PathLike[str] | None = None) -> Graph:
        """The graph of ROOT, its index built or refreshed first. ``seed``: another checkout of the same code whose
        index ROOT's starts from when ROOT has none (only the files that differ are parsed; :func:`store.seed`)."""
        path = Path(root).resolve()
        if not path.is_dir():
            raise PrismError(f"cannot index {path}: not a directory", hint="pass --root DIR with an existing directory")
        origin = Path(seed).resolve() if seed is not None else None
        try:
            seeded = origin is not None and store.seed(path, origin)
            conn, fresh = store.connect(path)
        except (OSError, sqlite3.Error) as exc:
            raise PrismError(f"cannot write the index {store.index_path(path)}: {exc}",
                             hint="index a directory you can write to, or fix the permissions of its .tomo/") from exc
        stats = indexer.refresh(path, conn, fresh, progress=progress, workers=workers)
        if seeded:
            stats.seeded_from = str(origin)
        if fresh:
            conn = store.publish(path, conn)
        return cls(path, conn, stats)

    def refresh(self, progress: Progress | None = None) -> IndexStats:
        """Re-parse files changed on disk since the last refresh (cheap when nothing changed).

        What earlier queries learnt is kept when the refresh wrote nothing (an MCP session refreshes before every
        query), and dropped as soon as it wrote a row.
        """
        before = self.conn.total_changes
        self.stats = indexer.refresh(self.root, self.conn, False, progress=progress)
        if self.conn.total_changes != before:
            self._forget()
        return self.stats

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Graph:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def errors(self) -> list[tuple[str, str]]:
        """Files that did not parse cleanly: (path, first error). They are indexed as far as they parse."""
        return self.stats.errors

    # ---- symbols -----------------------------------------------------------------------------------------------

    def find_symbol(self, query: str, limit: int = 50) -> list[Symbol]:
        """Definitions whose qualified name is ``query``, ends with ``.query``, or whose name contains it."""
        q = query.strip()
        if not q:
            return []
        rows = self._defs_matching(q)
        if not rows:
            rows = self.conn.execute(
                _DEF_SELECT + " WHERE d.name LIKE ? ESCAPE '\\' ORDER BY length(d.name), d.qualname LIMIT ?",
                (f"%{_like(q.split('.')[-1])}%", limit)).fetchall()
        return [_symbol(r) for r in rows[:limit]]

    def _defs_matching(self, q: str) -> list[Any]:
        name = q.split(".")[-1].split("@")[0]  # `m.helper@1`: a redefinition, stored under its plain name
        one = self.conn.execute(_DEF_SELECT + " WHERE d.qualname=? AND d.name=? LIMIT 2", (q, name)).fetchall()
        if len(one) == 1:
            return one  # a qualified name, as queries mostly get: not every `__init__` of the repository
        rows = self.conn.execute(_DEF_SELECT + " WHERE d.name=? ORDER BY d.qualname", (name,)).fetchall()
        exact = [r for r in rows if r[0] == q]
        if exact:
            return exact
        if "." in q:
            return [r for r in rows if r[0].endswith("." + q)]
        return rows

    def symbol(self, spec: SymbolLike) -> Symbol:
        """The one symbol ``spec`` names (qualified name, unique suffix/name, or ``path:line[:col]``); else an error."""
        if isinstance(spec, Symbol):
            return spec
        s = spec.strip()
        loc = _parse_location(s)
        if loc is not None:
            return self._symbol_at(*loc)
        rows = self._defs_matching(s)
        if not rows:
            module = self._module_symbol(s)
            if module is not None:
                return module
        if len(rows) == 1:
            return _symbol(rows[0])
        if len(rows) > 1:
            listing = "\n".join(f"  {r[0]}  ({r[2]}, {r[3]}:{r[4]})" for r in rows[:20])
            more = f"\n  ... and {len(rows) - 20} more" if len(rows) > 20 else ""
            raise PrismError(f"`{s}` matches {len(rows)} symbols:\n{listing}{more}",
                             hint="pass one of the qualified names above, or path:line:col")
        raise PrismError(f"no symbol named `{s}`", hint=self._suggest(s))

    def _suggest(self, s: str) -> str:
        name = s.split(".")[-1]
        names = [r[0] for r in self.conn.execute(
            "SELECT DISTINCT name FROM defs WHERE name LIKE ? OR length(name) BETWEEN ? AND ?",
            (f"{_like(name[:2])}%", len(name) - 2, len(name) + 2))]
        close = difflib.get_close_matches(name, names, n=5, cutoff=0.6)
        if not close:
            return "run `tomo graph symbols QUERY` to search, or `tomo graph index` if the file is new"
        quals = []
        for c in close:
            quals += [r[0] for r in self.conn.execute("SELECT qualname FROM defs WHERE name=? LIMIT 3", (c,))]
        return "did you mean: " + ", ".join(quals[:8]) + "?"

    def _module_symbol(self, module: str) -> Symbol | None:
        row = self.conn.execute("SELECT path, lang FROM files WHERE module=? LIMIT 1", (module,)).fetchone()
        if row is None:
            return None
        return Symbol(module, module.split(".")[-1], "module", row[0], 1, 0, 0, row[1])

    def _symbol_at(self, path: str, line: int, col: int | None) -> Symbol:
        rel = self._rel(path)
        frow = self.conn.execute("SELECT id, lang FROM files WHERE path=?", (rel,)).fetchone()
        if frow is None:
            raise PrismError(f"{rel} is not in the index", hint="check the path (relative to the root) or re-index")
        rows = self.conn.execute(_DEF_SELECT + " WHERE d.file_id=? AND d.line=? ORDER BY d.col",
                                 (frow[0], line)).fetchall()
        for r in rows:
            if col is None or r[5] <= col < r[5] + len(r[1]):
                return _symbol(r)
        if col is not None:  # a use, not a definition: resolve it
            res = Resolver(self.conn, self.root)
            for name, blob in self.conn.execute("SELECT name, data FROM refs WHERE file_id=?", (frow[0],)):
                for occ in _decode(res, frow[0], blob):
                    if occ[0] == line and occ[1] <= col < occ[1] + len(name):
                        if frow[1] != "python":
                            return self._other_symbol_at(rel, frow[1], name, occ)
                        v = self._bind_occurrence(res, frow[0], name, occ)
                        if v is not None and v[0] in ("def", "prop", "bound"):
                            return self.symbol(v[1])
                        if v is not None and v[0] == "mod":
                            m = self._module_symbol(v[1])
                            if m is not None:
                                return m
                        raise PrismError(f"`{name}` at {rel}:{line}:{col} is not bound to an indexed definition",
                                         hint="it may be a builtin, a third-party name or an untyped attribute")
        raise PrismError(f"no symbol at {rel}:{line}" + (f":{col}" if col is not None else ""),
                         hint="point at a definition's or reference's name (line is 1-based, col 0-based)")

    def _other_symbol_at(self, rel: str, lang: str, name: str, occ: tuple[Any, ...]) -> Symbol:
        """The one definition a use in JS/TS/Go/Rust/Java is provably bound to (see :mod:`tomo.prism.otherbind`)."""
        binder = OtherBinder(self.conn, self.root)
        family = _FAMILY.get(lang, lang)
        found = [s for s in (_symbol(r) for r in self.conn.execute(_DEF_SELECT + " WHERE d.name=?", (name,)))
                 if _FAMILY.get(s.language, s.language) == family
                 and binder.classify(s, rel, lang, occ)[0] == "confirmed"]
        if len(found) == 1:
            return found[0]
        raise PrismError(f"`{name}` at {rel}:{occ[0]}:{occ[1]} is not provably bound to one indexed definition",
                         hint="point at the definition instead (tomo graph symbols NAME lists them)")

    def _rel(self, path: str) -> str:
        p = Path(path)
        if p.is_absolute():
            try:
                return p.resolve().relative_to(self.root).as_posix()
            except ValueError as exc:
                raise PrismError(f"{path} is outside the graph root {self.root}", hint="use a path under the root") \
                    from exc
        return p.as_posix()

    def definition(self, symbol: SymbolLike) -> Symbol:
        return self.symbol(symbol)

    # ---- references --------------------------------------------------------------------------------------------

    @_without_gc
    def references(self, symbol: SymbolLike) -> list[Reference]:
        """Every place that refers to ``symbol`` (its definition included), confirmed or ambiguous with a reason."""
        return [o.ref for o in self.occurrences(symbol)]

    @_without_gc
    def occurrences(self, symbol: SymbolLike, resolver: Resolver | None = None) -> list[Occurrence]:
        """References with their enclosing scope; pass one ``resolver`` to share its caches across many calls.

        Answers are kept per symbol until the index changes (a refresh, or another connection's commit).
        """
        self._current()
        sym = self.symbol(symbol)
        got = self._occ.get(sym)
        if got is None:
            got = self._occ[sym] = [
                Occurrence(o.file_id, o.scope, Reference(r.path, r.line, r.col, self.line_at(r.path, r.line),
                                                         r.confidence, r.reason, r.kind))
                for o in self._bare(sym, resolver) for r in (o.ref,)]
        return list(got)

    def _bare(self, sym: Symbol, resolver: Resolver | None = None) -> list[Occurrence]:
        """Occurrences without their source line (text ""): impact needs no text, and reading it is a query's
        largest cost after resolution (every file that uses the name)."""
        got = self._bare_occ.get(sym)
        if got is None:
            res = resolver or self._facts.fresh()
            got = self._bare_occ[sym] = self._find_occurrences(sym, res)
            for path, lines in res.source_lines():
                self._kept.setdefault(path, lines)
        return got

    def _find_occurrences(self, sym: Symbol, res: Resolver) -> list[Occurrence]:
        out: list[Occurrence] = []
        aliased: set[tuple[int, str]] = set()
        family = _FAMILY.get(sym.language, sym.language)
        binder = OtherBinder(self.conn, self.root) if sym.language != "python" else None
        for fid, path, lang, occs in self._name_rows(res, sym.name):
            if _FAMILY.get(lang, lang) != family:
                continue
            for occ in occs:
                got = (self._classify_python(res, sym, fid, path, occ) if binder is None
                       else binder.classify(sym, path, lang, occ))
                if got is None:
                    continue
                conf, reason, kind = got
                out.append(Occurrence(fid, occ[2], Reference(path, occ[0], occ[1], "", conf, reason, kind)))
                if kind == "import" and conf == "confirmed" and lang == "python" and (fid, occ[2]) not in aliased:
                    aliased.add((fid, occ[2]))
                    out += self._alias_uses(res, sym, fid, path, occ[2])
        out.sort(key=lambda o: (o.ref.path, o.ref.line, o.ref.col))
        return out

    def _name_rows(self, res: Resolver, name: str) -> list[tuple[int, str, str, list[tuple[Any, ...]]]]:
        """(file id, path, language, occurrences) of every file using ``name``, decoded once per query: impact
        asks for the same name again for each of its methods called ``__init__`` or ``save``."""
        key = ("rows", name)
        got: list[tuple[int, str, str, list[tuple[Any, ...]]]] | None = res.memo.get(key)
        if got is None:
            rows = self.conn.execute("SELECT r.file_id, f.path, f.lang, r.data FROM refs r JOIN files f"
                                     " ON f.id=r.file_id WHERE r.name=?", (name,)).fetchall()
            res.load_infos([r[0] for r in rows])  # with each file's path and module: no statement per file later
            got = res.memo[key] = [(fid, path, lang, _decode(res, fid, blob)) for fid, path, lang, blob in rows]
        return got

    def _alias_uses(self, res: Resolver, sym: Symbol, fid: int, path: str, scope: str) -> list[Occurrence]:
        """Uses of ``from m import NAME as ALIAS``: references to the symbol under another name.

        They count for callers and impact; a rename leaves them alone (the import's NAME is the only edit).
        """
        out: list[Occurrence] = []
        binds = res.info(fid).binds(scope)
        for alias, entries in binds.items():
            if alias == sym.name or not any(e[1] == "from" and e[3] == sym.name for e in entries):
                continue
            row = self.conn.execute("SELECT data FROM refs WHERE file_id=? AND name=?", (fid, alias)).fetchone()
            for occ in _decode(res, fid, row[0]) if row else ():
                if occ[4] & (STRING | MODPATH | IMPORT | KWARG):
                    continue
                v = self._bind_occurrence(res, fid, alias, occ)
                if v is not None and v[0] in ("def", "prop", "bound") and v[1] == sym.qualname:
                    kind = "call" if occ[4] & CALL else "reference"
                    out.append(Occurrence(fid, occ[2], Reference(path, occ[0], occ[1], "", "confirmed",
                                                                 f"{ALIAS_REASON} `{alias}`", kind)))
        return out

    def _classify_python(self, res: Resolver, sym: Symbol, fid: int, path: str,
                         occ: tuple[Any, ...]) -> tuple[Confidence, str, str] | None:
        line, col, scope, recv, flags = occ
        target = sym.qualname
        if recv == "?" and not flags & (STRING | KWARG | MODPATH | IMPORT):
            recv = res.long_receiver(fid, line, col, sym.name) or "?"  # too long to store: read from the source
            occ = (line, col, scope, recv, flags)
        if flags & STRING:
            return self._classify_string(res, sym, fid, scope, recv or "", flags)
        if flags & KWARG:
            return self._classify_keyword(res, sym, fid, scope, recv or "?", line)
        if flags & DEF and path == sym.path and line == sym.line and col == sym.col:
            return "confirmed", "", "definition"
        kind = "import" if flags & (IMPORT | MODPATH) else "call" if flags & CALL else "reference"
        if flags & DEF:
            kind = "definition"
        if flags & MODPATH:
            if sym.kind != "module":
                return None
            mod = f"{recv}.{sym.name}" if recv else sym.name
            return ("confirmed", "", kind) if mod == target else None
        v = self._bind_occurrence(res, fid, sym.name, occ)
        if v is not None and v[0] in ("def", "prop", "bound") and same_name(v[1], target):
            if v[0] == "bound" and v[2]:
                other = res.overridden_below(v[2], sym.name, v[1])
                if other is not None:
                    return "ambiguous", f"the receiver may be a {other.rsplit('.', 1)[0]}, which overrides it", kind
            return "confirmed", "", kind
        if v is not None and v[0] == "mod" and v[1] == target:
            return "confirmed", "", kind
        if sym.kind in _MEMBER_KINDS and v is not None and v[0] in ("def", "prop", "bound"):
            # the same member name up or down the class hierarchy: renaming one side alone breaks overriding,
            # so its definition and its uses are offered together (ambiguous) for an all-or-nothing --ambiguous
            key = ("override", sym.qualname, v[1], kind)  # the same method called from many places
            if key not in res.memo:
                res.memo[key] = self._override(res, sym, v[1], kind)
            return res.memo[key]
        if v is not None:
            return None  # bound to something else, provably
        if recv is None:
            if flags & IMPORT:
                return "ambiguous", "import not resolved in the index", kind
            return "ambiguous", f"`{sym.name}` is not bound to an indexed definition here", kind
        if flags & IMPORT:
            return None  # from an external module
        rv = res.receiver_type(fid, scope, recv, line)
        if rv is None:
            return "ambiguous", f"untyped receiver `{recv}`", kind
        if rv[0] == "ext":
            return None
        if rv[0] == "union":
            if all(t[0] == "ext" for t in rv[1]):
                return None
            kinds = " or ".join(t[1] for t in rv[1])
            return "ambiguous", f"`{recv}` is assigned different types ({kinds})", kind
        if rv[0] == "inst" and sym.kind in ("method", "attribute", "variable"):
            owner = sym.qualname.rsplit(".", 1)[0]
            if res.member(rv[1], "__getattr__") is not None:
                return "ambiguous", f"`{recv}` is a {rv[1]} that forwards attributes (__getattr__)", kind
            if owner in res.mro(rv[1]) or not res.has_unknown_base(rv[1]):
                # the receiver's class is fully known and lacks the name, or would have found it: dynamic at most
                return "ambiguous", f"`{recv}` is a {rv[1]} that has no `{sym.name}`", kind
            return "ambiguous", f"`{recv}` is a {rv[1]} whose bases are not all indexed", kind
        return None

    def _classify_keyword(self, res: Resolver, sym: Symbol, fid: int, scope: str, callee: str,
                          line: int) -> tuple[Confidence, str, str] | None:
        """``C(name=...)``: the field ``name`` of class C, when the callee is provably a class that has it.

        Confirmed only for a dataclass without an ``__init__`` of its own: its generated constructor takes exactly
        the fields; any other constructor may do anything with the keyword.
        """
        if sym.kind not in ("variable", "attribute"):
            return None
        owner = sym.qualname.rsplit(".", 1)[0]
        v = res.eval(fid, scope, callee, line)
        if v is None or v[0] != "def":
            return None
        d = res.definition(v[1])
        if d is None or d[3] != "class" or owner not in res.mro(v[1]):
            return None
        m = res.member(v[1], sym.name)
        if m is not None and not same_name(m, sym.qualname):
            return None  # the class redefines the field: the keyword is its own
        generated = _is_dataclass(res, owner) and _is_dataclass(res, v[1])
        custom_init = any(res.definition(f"{c}.__init__") is not None for c in res.mro(v[1]))
        if generated and not custom_init and not res.has_unknown_base(v[1]):
            return "confirmed", "", "keyword"
        return "ambiguous", f"keyword argument of {v[1]}(...)", "keyword"

    def _override(self, res: Resolver, sym: Symbol, other: str, kind: str) -> tuple[Confidence, str, str] | None:
        """``other``: a method of the same name in a subclass or a base class of ``sym``'s class, or None.

        The hierarchy is asked before ``other``'s own definition is read: almost every ``other`` is unrelated
        (Field.__init__'s impact asks about 8,652 pairs, 78 related), and reading each definition alone was a
        third of the cost (its class's, which the MRO reads, is needed either way). The tests are a conjunction of
        reads of the index and of MROs, so their order changes no answer; the MROs of a name that is no member
        (not computed before) are kept like any other, and only a cyclic hierarchy's depends on which is first."""
        other_owner, last = other.rsplit(".", 1)[0], other.rsplit(".", 1)[-1]
        if last != sym.name:
            return None
        owner = sym.qualname.rsplit(".", 1)[0]
        od = res.definition(owner)
        if od is None or od[3] != "class":
            return None  # a module variable: no hierarchy
        if owner in res.mro(other_owner):
            relation = f"{other} overrides {sym.qualname}"
        elif other_owner in res.mro(owner):
            relation = f"{sym.qualname} overrides {other}"
        else:
            return None
        d = res.definition(other)
        if d is None or d[3] not in _MEMBER_KINDS:
            return None
        return "ambiguous", relation if kind == "definition" else f"bound to {other}; {relation}", kind

    def _bind_occurrence(self, res: Resolver, fid: int, name: str, occ: tuple[Any, ...]) -> Value:
        key = ("bind", fid, name, occ)  # one occurrence is classified for each symbol of its name an impact visits
        if key in res.memo:
            return res.memo[key]
        got = res.memo[key] = self._bind(res, fid, name, occ)
        return got

    def _bind(self, res: Resolver, fid: int, name: str, occ: tuple[Any, ...]) -> Value:
        line, _col, scope, recv, flags = occ
        if flags & (STRING | KWARG):
            return None
        if flags & MODPATH:
            return res._module_value(f"{recv}.{name}" if recv else name)
        if flags & IMPORT:
            return res.attribute(res._module_value(recv), name)
        if recv is None:
            return res.lookup(fid, scope, name, line)
        rv = res.receiver_type(fid, scope, recv, line)
        if rv is None:
            return None
        return res.attribute(rv, name)

    def _classify_string(self, res: Resolver, sym: Symbol, fid: int, scope: str, recv: str,
                         flags: int) -> tuple[Confidence, str, str] | None:
        ctx, _, text = recv.partition("|")
        if flags & ALL:
            v = res.lookup(fid, res.module_name(fid), sym.name, 10**9)
            if v is not None and v[0] == "def" and v[1] == sym.qualname:
                return "confirmed", "", "string"
            return None if v is not None else ("ambiguous", "__all__ entry", "string")
        if "." in text:
            target = _dotted_target(res, text, sym.name)
            if target is not None and target != sym.qualname:
                return None  # a dotted path that provably names something else ("pkg.mod.Other.name")
        fn = ctx.rsplit(".", 1)[-1]
        if fn in ("getattr", "hasattr", "setattr", "delattr"):
            return "ambiguous", "getattr string", "string"
        if "patch" in ctx:
            return "ambiguous", "mock.patch target", "string"
        if fn in ("import_module", "__import__") or ctx.endswith("import_string"):
            return "ambiguous", "dynamic import", "string"
        return "ambiguous", "string mention", "string"

    def _raw_lines(self, path: str) -> list[bytes]:
        """The file's lines as bytes, read once per graph (until the index changes).

        Split on b"\\n" only, as tree-sitter counts rows (splitlines also breaks at \\f, \\x1c, \\u2028...), and left
        undecoded: a query quotes a few lines of each file it lists (Model.save: 812 in 170 files, 5 MB), and
        decoding whole files cost twice the splitting. "\\n" is never inside a UTF-8 sequence, so a line decodes
        alone exactly as it does within its file.
        """
        lines = self._lines.get(path)
        if lines is None:
            try:
                lines = (self.root / path).read_bytes().split(b"\n")
            except OSError:
                lines = []
            self._lines[path] = lines
        return lines

    def line_at(self, path: str, line: int) -> str:
        """One line of the file, decoded and stripped: from the lines the query's source reading split (with their
        breaks, which the strip removes; split where b"\n" splits, a lone CR left such a file whole), else
        :meth:`_raw_lines`'s."""
        lines = self._kept.get(path) or self._raw_lines(path)
        return lines[line - 1].decode("utf-8", "replace").strip() if 0 < line <= len(lines) else ""

    def text_of(self, path: str) -> str:
        """The whole file as text (its "\\n" lines joined again)."""
        return b"\n".join(self._raw_lines(path)).decode("utf-8", "replace")

    # ---- calls -------------------------------------------------------------------------------------------------

    @_without_gc
    def callers(self, symbol: SymbolLike) -> list[Caller]:
        """Call sites of ``symbol`` with the function (or module) that contains each."""
        self._current()
        sym = self.symbol(symbol)
        got = self._answers.get(("callers", sym))
        if got is None:
            calls = [o for o in self.occurrences(sym) if o.ref.kind == "call"]
            self._load_scopes(calls)
            got = self._answers[("callers", sym)] = [
                Caller(self._scope_symbol(o.file_id, o.scope, o.ref.path), o.ref) for o in calls]
        return list(got)

    def _load_scopes(self, occs: list[Occurrence]) -> None:
        """Read the enclosing definitions of many occurrences in a few statements (one each costs more than the
        rows): the first row of a (qualname, file) pair, as :meth:`_scope_symbol` would read it. The file's path
        and language are the occurrence's own file's, known already: no join with the files table."""
        want = {(o.file_id, o.scope): o.ref.path for o in occs if (o.file_id, o.scope) not in self._scopes}
        names = sorted({scope for _, scope in want})
        found: dict[tuple[int, str], Any] = {}
        for i in range(0, len(names), 500):
            chunk = names[i:i + 500]
            for row in self.conn.execute(
                    "SELECT rowid, file_id, qualname, name, kind, line, col, end_line FROM defs"
                    f" WHERE qualname IN ({','.join('?' * len(chunk))})", chunk):
                key = (row[1], row[2])
                if key in want and (key not in found or row[0] < found[key][0]):
                    found[key] = row
        file = self._facts.file
        for (fid, scope), path in want.items():
            r = found.get((fid, scope))
            self._scopes[(fid, scope)] = (_module_scope(scope, path) if r is None
                                          else Symbol(r[2], r[3], r[4], path, r[5], r[6], r[7], file(fid)[3]))

    def _scope_symbol(self, fid: int, scope: str, path: str) -> Symbol:
        got = self._scopes.get((fid, scope))
        if got is None:
            row = self.conn.execute(_DEF_SELECT + " WHERE d.qualname=? AND d.file_id=?", (scope, fid)).fetchone()
            got = _symbol(row) if row is not None else _module_scope(scope, path)
            self._scopes[(fid, scope)] = got
        return got

    @_without_gc
    def callees(self, symbol: SymbolLike) -> list[Callee]:
        """Calls made inside ``symbol``'s body, each bound to its target when prism can prove it."""
        sym = self.symbol(symbol)
        frow = self.conn.execute("SELECT id, lang FROM files WHERE path=?", (sym.path,)).fetchone()
        if frow is None:
            return []
        fid, lang = frow
        res = Resolver(self.conn, self.root)
        out = []
        for name, blob in self.conn.execute("SELECT name, data FROM refs WHERE file_id=?", (fid,)):
            for occ in _decode(res, fid, blob):
                line, col, scope, _recv, flags = occ
                if not flags & CALL:
                    continue
                if lang == "python":
                    if scope != sym.qualname and not scope.startswith(sym.qualname + "."):
                        continue
                elif not (sym.line <= line <= max(sym.end_line, sym.line)):
                    continue
                v = self._bind_occurrence(res, fid, name, occ) if lang == "python" else None
                target = self._value_symbol(v)
                conf: Confidence = "confirmed" if target is not None else "ambiguous"
                reason = "" if target else (UNBOUND if lang != "python" else "call target not bound")
                out.append(Callee(name, target, Reference(sym.path, line, col, self.line_at(sym.path, line), conf,
                                                          reason, "call")))
        out.sort(key=lambda c: (c.reference.line, c.reference.col))
        return out

    def _value_symbol(self, v: Value) -> Symbol | None:
        if v is None:
            return None
        if v[0] in ("def", "prop", "bound"):
            row = self.conn.execute(_DEF_SELECT + " WHERE d.qualname=?", (v[1],)).fetchone()
            return _symbol(row) if row else None
        if v[0] == "mod":
            return self._module_symbol(v[1])
        return None

    @_without_gc
    def impact(self, symbol: SymbolLike, max_depth: int = 4, limit: int = 500) -> list[ImpactItem]:
        """What may break if ``symbol`` changes: transitive callers and importers, tests marked.

        Ambiguous users are listed but not followed further: a chain of guesses would soon list the whole repository.
        """
        self._current()
        sym = self.symbol(symbol)
        key = ("impact", sym, max_depth, limit)
        got = self._answers.get(key)
        if got is None:
            got = self._answers[key] = self._impact(sym, max_depth, limit)
        return list(got)

    def _impact(self, sym: Symbol, max_depth: int, limit: int) -> list[ImpactItem]:
        res = self._facts.fresh()
        seen = {sym.qualname}
        out: list[ImpactItem] = []
        frontier: list[tuple[Symbol, Confidence]] = [(sym, "confirmed")]
        for depth in range(1, max_depth + 1):
            nxt: list[tuple[Symbol, Confidence]] = []
            for s, conf in frontier:
                if s.kind == "module" or conf != "confirmed":
                    continue
                uses = list(self._bare(s, res))
                if s.name == "__init__" and s.kind == "method":  # a constructor changes with every instantiation
                    cls = self.symbol(s.qualname.rsplit(".", 1)[0])
                    uses += [o for o in self._bare(cls, res) if o.ref.kind == "call"]
                self._load_scopes(uses)
                for o in uses:
                    if o.ref.kind not in ("call", "import", "reference"):
                        continue
                    via = o.ref.kind if o.ref.kind in ("import", "call") else "reference"
                    owner = self._scope_symbol(o.file_id, o.scope, o.ref.path)
                    if owner.qualname in seen:
                        continue
                    seen.add(owner.qualname)
                    c: Confidence = "confirmed" if conf == "confirmed" and o.ref.confidence == "confirmed" \
                        else "ambiguous"
                    out.append(ImpactItem(owner, depth, via, is_test_path(owner.path), c))
                    nxt.append((owner, c))
                    if len(out) >= limit:
                        return out
            frontier = nxt
        return out

    # ---- rename ------------------------------------------------------------------------------------------------

    def rename_plan(self, symbol: SymbolLike, new: str) -> Plan:
        return plan_rename(self, self.symbol(symbol), new)

    def apply(self, plan: Plan, include_ambiguous: bool = False) -> Applied:
        applied = apply_plan(self.root, plan, include_ambiguous)
        self.refresh()
        return applied

    def iter_files(self, lang: str | None = None) -> Iterator[tuple[int, str]]:
        sql = "SELECT id, path FROM files" + (" WHERE lang=?" if lang else "")
        yield from self.conn.execute(sql, (lang,) if lang else ())


_DEF_SELECT = ("SELECT d.qualname, d.name, d.kind, f.path, d.line, d.col, d.end_line, f.lang"
               " FROM defs d JOIN files f ON f.id=d.file_id")


def _is_dataclass(res: Resolver, cls: str) -> bool:
    d = res.definition(cls)
    decs = d[8].get("decorators", []) if d is not None else []
    return any(x.split("(", 1)[0].rsplit(".", 1)[-1] == "dataclass" for x in decs)


def _dotted_target(res: Resolver, text: str, name: str) -> str | None:
    """The qualified name a dotted string like "pkg.mod.Class.name" resolves to, or None if it cannot say."""
    parts = text.replace(":", ".").split(".")
    if name not in parts:
        return None
    parts = parts[: parts.index(name) + 1]
    for k in range(len(parts) - 1, 0, -1):
        v: Value = res._module_value(".".join(parts[:k]))
        if v is None or v[0] != "mod":
            continue
        for attr in parts[k:]:
            v = res.attribute(res.type_of(v), attr)
            if v is None:
                return None
        return v[1] if v[0] in ("def", "prop", "bound", "mod") else None
    return None


def _decode(res: Resolver, fid: int, blob: bytes) -> list[tuple[Any, ...]]:
    """Occurrences of one name in one file, with the scope index turned back into its qualified name."""
    scopes = res.info(fid).scopes
    return [(o[0], o[1], scopes[o[2]], o[3], o[4]) for o in marshal.loads(blob)]


def _module_scope(scope: str, path: str) -> Symbol:
    return Symbol(scope, scope.split(".")[-1], "module", path, 1, 0, 0, "python")


def _symbol(r: Any) -> Symbol:
    return Symbol(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7])


def _like(s: str) -> str:
    return s.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _parse_location(s: str) -> tuple[str, int, int | None] | None:
    parts = s.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        return parts[0], int(parts[1]), int(parts[2])
    parts = s.rsplit(":", 1)
    if len(parts) == 2 and parts[1].isdigit() and ("/" in parts[0] or "." in parts[0]):
        return parts[0], int(parts[1]), None
    return None
