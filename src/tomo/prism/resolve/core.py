"""Python binding resolution over the stored facts, at query time.

A *value* says what a name or expression is, as far as prism can prove it:

- ``("mod", "pkg.mod")``: a module in the index;  ``("ext", "os.path")``: something outside the index;
- ``("def", qualname)``: a definition in the index (class, function, method, variable, attribute);
- ``("inst", class_qualname)``: an instance of an indexed class;
- ``("local", file_id, scope, rhs, annotation, line)``: a local variable, typed through its assignment;
- ``None``: unknown. Unknown is never turned into a guess; the caller reports it as ambiguous.

Everything is memoised per :class:`Resolver` (one per query), so resolving hundreds of occurrences of one name
costs a handful of blob decodes.
"""

from __future__ import annotations

import marshal
import re
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Self

from tomo.prism.pysource import Source, comprehension_element, literal_items
from tomo.prism.resolve.text import (
    _BUILTIN_ITER,
    _BUILTIN_TYPES,
    _CONTEXT_MANAGERS,
    _DICT_VIEW,
    _METHOD_WRAPPER,
    _PARTIAL,
    _PROPERTY_DECORATORS,
    _TYPING_CONTAINERS,
    _WRAPPERS,
    _after_last_subscript,
    _bare_qualifier,
    _component_ann,
    _item_ann,
    _keeps_return,
    _line_of,
    _literal_type,
    _mapping_args,
    _matching_open,
    _parse,
    _pick,
    _redefined,
    _split_top,
    _unsubscript,
    _value_ann,
)

Value = tuple[Any, ...] | None

_MAX_DEPTH = 12


class FileInfo:
    """One file's stored facts, decoded lazily: the scope table up front, each scope's bindings on first use."""

    __slots__ = ("_binds", "kinds", "parents", "raw", "scopes")

    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw
        self.scopes: list[str] = raw.get("scopes") or [""]
        skind, spar = raw.get("skind"), raw.get("sparent")
        self.kinds: dict[str, str] = (
            dict(zip(self.scopes, skind, strict=False)) if skind else {self.scopes[0]: "module"})
        self.parents: dict[str, str] = (
            {q: self.scopes[p] for q, p in zip(self.scopes, spar, strict=False) if p >= 0} if spar else {})
        self._binds: dict[str, dict[str, list[tuple[Any, ...]]]] = {}

    def binds(self, scope: str) -> dict[str, list[tuple[Any, ...]]]:
        got = self._binds.get(scope)
        if got is None:
            blob = self.raw.get("binds", {}).get(scope)
            got = marshal.loads(blob) if blob else {}
            self._binds[scope] = got
        return got

    def entries(self, scope: str, name: str) -> list[tuple[Any, ...]] | None:
        """``binds(scope).get(name)``, without decoding the scope's bindings when their bytes cannot hold ``name``:
        marshal writes a string's first use verbatim, so a name absent from the blob is none of its keys. Looking
        a name up walks the enclosing scopes, and most of them do not bind it."""
        got = self._binds.get(scope)
        if got is None:
            blob = self.raw.get("binds", {}).get(scope)
            if isinstance(blob, bytes) and name.encode("utf-8", "surrogatepass") not in blob:
                return None
            got = self.binds(scope)
        return got.get(name)

    def get(self, key: str, default: Any = None) -> Any:
        return self.raw.get(key, default)


class Core:
    """The resolver's engine: the stored facts, the cycle guards, and the evaluation of names and expressions. What
    a rule family adds (resolve/classes.py, decorators.py, ...) it reaches through the methods named at the end of
    this class; :class:`tomo.prism.resolve.Resolver` puts the families together.

    A family's state (its memos) is the attributes its class body annotates: the resolver keeps all of them in
    slots, and each family's ``__init__`` starts its own.
    """

    conn: sqlite3.Connection
    root: Path | None
    _cuts: int
    _info: dict[int, FileInfo]
    _file: dict[int, tuple[str, str, bool, str]]
    _mod: dict[str, int | None]
    _def: dict[str, tuple[Any, ...] | None]
    _stack: set[tuple[Any, ...]]
    _pending: set[tuple[Any, ...]]
    _outer: dict[tuple[int, str], Value]
    _star: dict[tuple[int, str], Value]
    _mod_attr: dict[tuple[str, str], Value]
    _free: dict[tuple[int, str], Value]
    _outside: dict[tuple[int, str, str], bool]
    _agree: dict[tuple[int, str, str], Value]
    _receiver: dict[tuple[int, str, str, int], Value]
    _chain: dict[tuple[Value, tuple[tuple[str, str], ...]], tuple[Value, int, bool]]
    memo: dict[Any, Any]
    _sources: dict[int, Source]
    _reached: dict[tuple[int, str, str, int], tuple[Any, ...] | None]

    def __init__(self, conn: sqlite3.Connection, root: Path | None = None) -> None:
        """``root`` lets a query read call arguments from the source (they are not among the stored facts)."""
        self.conn = conn
        self.root = root
        self._info = {}
        self._file = {}  # id -> (path, module, is_pkg, lang)
        self._mod = {}
        self._def = {}
        self._stack = set()
        # cycle guards met so far, the stack's and those of the memos filled in place (mro, agreeing locals,
        # fixtures): a value computed without meeting one depends on nothing but what was asked
        self._cuts = 0
        self._pending = set()  # the memos filled in place that are being computed
        self._outer = {}  # (file, name) -> its module-level binding, read from inside
        self._star = {}  # (file, name) -> what it is where no scope binds it
        self._mod_attr = {}  # (module as imported, attribute) -> what it is
        self._free = {}  # (file, receiver) -> its type, read outside every function
        self._outside = {}  # (file, function, name) -> bound only at module level
        self._agree = {}
        self._receiver = {}
        self._chain = {}
        self.memo = {}  # what a query concludes per occurrence, for the queries of one answer
        self._sources = {}
        self._reached = {}

    def fresh(self) -> Self:
        """A resolver sharing this one's stored facts (files, file infos, definitions: plain reads of the index,
        the same whoever asks) but none of its conclusions, so an answer never depends on the queries before it.
        Valid while the index is unchanged: a graph makes a new one on every refresh."""
        r = type(self)(self.conn, self.root)
        r._info, r._file, r._mod, r._def = self._info, self._file, self._mod, self._def
        return r

    # ---- stored facts --------------------------------------------------------------------------------------------

    def info(self, fid: int) -> FileInfo:
        got = self._info.get(fid)
        if got is None:
            row = self.conn.execute("SELECT info FROM files WHERE id=?", (fid,)).fetchone()
            got = FileInfo(marshal.loads(row[0]) if row and row[0] else {})
            self._info[fid] = got
        return got

    def files_known(self) -> int:
        """How many files' infos this resolver holds decoded (what sharing it between queries costs in memory)."""
        return len(self._info)

    def load_infos(self, fids: list[int]) -> None:
        """Read the infos of many files in a few statements rather than one each (a query visits hundreds), and
        their path and module with them (every lookup asks a file's module name)."""
        missing = sorted({f for f in fids if f not in self._info})
        for i in range(0, len(missing), 500):
            chunk = missing[i:i + 500]
            for fid, blob, path, module, is_pkg, lang in self.conn.execute(
                    "SELECT id, info, path, module, is_pkg, lang FROM files"
                    f" WHERE id IN ({','.join('?' * len(chunk))})", chunk):
                self._info[fid] = FileInfo(marshal.loads(blob) if blob else {})
                self._file.setdefault(fid, (path, module, bool(is_pkg), lang))

    def file(self, fid: int) -> tuple[str, str, bool, str]:
        got = self._file.get(fid)
        if got is None:
            row = self.conn.execute("SELECT path, module, is_pkg, lang FROM files WHERE id=?", (fid,)).fetchone()
            got = (row[0], row[1], bool(row[2]), row[3]) if row else ("", "", False, "")
            self._file[fid] = got
        return got

    def module_file(self, module: str) -> int | None:
        """The file of a module, by its dotted name under a source root, else by its package import name."""
        if module in self._mod:
            return self._mod[module]
        row = self.conn.execute("SELECT id FROM files WHERE module=? AND lang='python' ORDER BY is_pkg DESC LIMIT 1",
                                (module,)).fetchone()
        if row is None:
            rows = self.conn.execute("SELECT id FROM files WHERE import_name=? AND lang='python' LIMIT 2",
                                     (module,)).fetchall()
            row = rows[0] if len(rows) == 1 else None
        fid = row[0] if row else None
        self._mod[module] = fid
        return fid

    def module_name(self, fid: int) -> str:
        return self.file(fid)[1]

    def definition(self, q: str) -> tuple[Any, ...] | None:
        """(file_id, qualname, name, kind, line, col, end_line, parent, data) of an indexed definition."""
        if q in self._def:
            return self._def[q]
        row = self.conn.execute("SELECT file_id, qualname, name, kind, line, col, end_line, parent, data FROM defs"
                                " WHERE qualname=? LIMIT 1", (q,)).fetchone()
        got = (*row[:8], marshal.loads(row[8])) if row else None
        self._def[q] = got
        return got

    # ---- names -------------------------------------------------------------------------------------------------

    def lookup(self, fid: int, scope: str, name: str, line: int) -> Value:
        """What ``name`` is bound to at ``line`` inside ``scope`` (LEGB; class bodies are skipped from methods)."""
        info = self.info(fid)
        kinds = info.kinds
        parents = info.parents
        s: str | None = scope
        first = True
        if name in info.get("globals", {}).get(scope, ()):
            s = self.module_name(fid)
            first = False  # a `global` name is read when the function runs, like any enclosing one
        while s is not None:
            kind = kinds.get(s, "module")
            if first or kind != "class":
                entries = info.entries(s, name)
                if entries:
                    narrowed = self._narrowed(fid, info, s, name, line) if kind in ("function", "method") else None
                    if narrowed is not None:
                        return narrowed
                    if len(entries) > 1 and kind in ("function", "method"):
                        # branches and loops: straight-line order proves nothing, every assignment must agree,
                        # unless the code's structure proves which one reaches this line
                        agreed = self._agreeing_local(fid, s, name, entries, line)
                        reached = self._reaching(fid, s, name, entries, line) if first and (
                            agreed is None or agreed[0] == "union") else None
                        return self._binding(fid, s, name, reached, line) if reached is not None else agreed
                    if not first and kind == "module":
                        return self._outer_binding(fid, s, name, entries)
                    if first or len(entries) == 1:
                        return self._binding(fid, s, name, _pick(entries, line), line)
                    return self._enclosing_binding(fid, s, name, entries, line)
            first = False
            if kind == "module":
                break
            parent = parents.get(s)  # (the module's name only when needed: this loop runs for every name read)
            s = parent if parent is not None else self.module_name(fid)
        return self._unbound(fid, name)

    def _unbound(self, fid: int, name: str) -> Value:
        """A name no scope of the file binds: from a star import, else a builtin type, else unknown. The same from
        every line and scope of the file, so remembered per file and name (as :meth:`_outer_binding` is)."""
        return self._clean_memo(self._star, (fid, name), self._star_or_builtin, fid, name)

    def _star_or_builtin(self, fid: int, name: str) -> Value:
        # star imports: only what each module exports, and when two provide the name (the later one wins at run
        # time, the earlier one for code between them) it is known only if they agree
        found = {self.attribute(("mod", e[2]), name) for e in self.info(fid).binds(self.module_name(fid)).get("*", ())
                 if self._star_exports(e[2], name)} - {None}
        if found:
            return found.pop() if len(found) == 1 else None
        return ("builtin", name) if name in _BUILTIN_TYPES else None

    def _clean_memo(self, memo: dict[Any, Value], key: Any, compute: Callable[..., Value], *args: Any) -> Value:
        """``memo[key]``, else ``compute(*args)``, kept in ``memo`` only when computing it met no cycle guard and no
        depth limit (:attr:`_cuts` did not move): then it depends on nothing that was being computed around it, and
        computing it again from anywhere would give the same. (Arguments, not a closure: this runs for every name
        and receiver a wide query reads.)"""
        if key in memo:
            return memo[key]
        cuts = self._cuts
        got = compute(*args)
        if self._cuts == cuts:
            memo[key] = got
        return got

    def _cut(self) -> bool:
        """Count a depth limit met (as a cycle guard is): a value computed past one is not remembered for others."""
        self._cuts += 1
        return True

    def _cycle(self, key: Any) -> bool:
        """Whether ``key`` is being computed around this call: a cycle guard met, counted as :meth:`_cut` counts a
        depth limit (what is computed past it is not remembered for others)."""
        if key in self._stack:
            self._cuts += 1
            return True
        return False

    def _outer_binding(self, fid: int, module: str, name: str, entries: list[tuple[Any, ...]]) -> Value:
        """A module-level name read from inside a function or class, remembered per file and name.

        It is the same wherever it is read from (a function runs after the module, see
        :meth:`_enclosing_binding`: no line matters), and a wide query reads the same few names (a test module's
        models, ``Book`` of ``Book.objects``) from hundreds of functions of one file, each time through the import
        to the module that defines it (kept under :meth:`_clean_memo`'s rule).
        """
        if len(entries) == 1:
            return self._clean_memo(self._outer, (fid, name), self._binding, fid, module, name, entries[0], 0)
        return self._clean_memo(self._outer, (fid, name), self._enclosing_binding, fid, module, name, entries, 0)

    def is_bound(self, fid: int, scope: str, name: str) -> bool:
        """Whether ``name`` has any binding visible from ``scope`` (whatever its value): what a rename would shadow."""
        info = self.info(fid)
        s: str | None = scope
        first = True
        while s is not None:
            kind = info.kinds.get(s, "module")
            if (first or kind != "class") and info.entries(s, name):
                return True
            first = False
            if kind == "module":
                return False
            parent = info.parents.get(s)
            s = parent if parent is not None else self.module_name(fid)
        return False

    def _reaching(self, fid: int, scope: str, name: str, entries: list[tuple[Any, ...]],
                  line: int) -> tuple[Any, ...] | None:
        """The one assignment of a local bound several times that the code's structure proves reaches ``line``.

        Read from the source alone (``entries`` are the scope's bindings of the name), so remembered: a chain like
        ``qs = qs.filter(...)`` asks it again for each earlier line while typing each later one."""
        key = (fid, scope, name, line)
        if key in self._reached:
            return self._reached[key]
        d = self.definition(scope)
        src = self._source(fid)
        if d is None or src is None:
            got = None
        else:
            at = src.reaching(d[4], name, line)
            found = [e for e in entries if e[0] == at and e[1] in ("assign", "param")] if at is not None else []
            got = found[0] if len(found) == 1 else None
        self._reached[key] = got
        return got

    def _agreeing_local(self, fid: int, scope: str, name: str, entries: list[tuple[Any, ...]], line: int) -> Value:
        """A local assigned more than once: its binding at ``line`` when every assignment gives the same type."""
        key = (fid, scope, name)
        if key not in self._agree:
            self._agree[key] = None  # a cycle (`x = x.next()`) proves nothing
            self._pending.add(("agree", key))
            types = {self.type_of(self._binding(fid, scope, name, e, e[0])) for e in entries}
            self._agree[key] = (None if None in types else
                                ("same",) if len(types) == 1 else ("union", tuple(sorted(types, key=repr))))
            self._pending.discard(("agree", key))
        elif ("agree", key) in self._pending:
            self._cuts += 1
        got = self._agree[key]
        if got is None:
            return None
        if got[0] == "union":  # different types: an attribute is known only where all of them agree on it
            return got
        return self._binding(fid, scope, name, _pick(entries, line), line)

    def _enclosing_binding(self, fid: int, scope: str, name: str, entries: list[tuple[Any, ...]],
                           line: int) -> Value:
        """A name bound several times in an enclosing scope, read from a nested function.

        The function runs later, so the binding above it in the file proves nothing (``def f`` twice, a try/except
        import, a rebinding further down): the name is known only when every binding gives the same value.
        """
        values = {self._binding(fid, scope, name, e, line) for e in entries}
        if len(values) == 1:
            return values.pop()
        defs = [v for v in values if v is not None and v[0] == "def"]
        if len(defs) == len(values) and len({_redefined(v[1]) for v in defs}) == 1:
            # `def f` twice, `@p.setter`: one name in one namespace; the last definition is the one that runs
            return self._binding(fid, scope, name, max(entries, key=_line_of), line)
        return None

    def _star_exports(self, module: str, name: str) -> bool:
        """Whether ``from module import *`` binds ``name``: listed in its ``__all__``, else any public name."""
        fid = self.module_file(module)
        if fid is None:
            return True
        exported = self.info(fid).get("all")
        return name in exported if exported is not None else not name.startswith("_")

    def _narrowed(self, fid: int, info: FileInfo, scope: str, name: str, line: int) -> Value:
        for s, var, typ, start, end in info.get("narrow", ()):
            if s == scope and var == name and start <= line <= end:
                v = self.eval(fid, scope, typ, start)
                if v is not None and v[0] == "def":
                    return ("inst", v[1])
        return None

    def _binding(self, fid: int, scope: str, name: str, entry: tuple[Any, ...], line: int) -> Value:
        bline, kind, a, b = entry
        if kind == "def":
            return ("def", a)
        if kind == "module":
            first = name if "." in a and a.split(".")[0] == name and a != name else a
            return self._module_value(first)
        if kind == "from":
            if a == self.module_name(fid) and self.file(fid)[2]:
                # `from . import fields` in a package's __init__: the submodule (asking the package for its own
                # attribute would only find this very import again)
                sub = self._module_value(f"{a}.{b}")
                if sub is not None and sub[0] == "mod":
                    return sub
            return self.attribute(self._module_value(a), b)
        if kind == "assign" or kind == "attr":
            info = self.info(fid)
            if info.kinds.get(scope, "module") in ("module", "class"):
                q = f"{scope}.{name}"
                if self.definition(q) is not None:
                    return ("def", q)
            if a is None and kind == "assign":
                return self._source_bound(fid, scope, name, bline)
            if a is not None and (a == "yield" or a.startswith("yield ")):
                return self._sent(fid, scope)
            return ("local", fid, scope, a, b, bline)
        if kind == "param":
            return self._param(fid, scope, name, a, b)
        return None

    def _module_attribute(self, name: str, attr: str) -> Value:
        """``attr`` of the module imported as ``name``: the same wherever it is read from (its last binding in the
        module, read after the module ran), so remembered under :meth:`_clean_memo`'s rule. A wide query reads the
        same few (``models.CharField``: 1,694 times in Field.__init__'s impact), each through its imports."""
        fid = self.module_file(name)
        module = self.module_name(fid) if fid is not None else name
        if fid is not None:
            binds = self.info(fid).binds(module)
            entries = binds.get(attr)
            if entries:
                key = ("attr", module, attr)
                if self._cycle(key):
                    return None
                self._stack.add(key)
                try:
                    return self._binding(fid, module, attr, max(entries, key=_line_of), 10**9)
                finally:
                    self._stack.discard(key)
        sub = self._module_value(f"{name}.{attr}")
        if sub is not None and sub[0] == "mod":
            return sub
        if fid is not None:
            return self.lookup(fid, module, attr, 10**9)
        return None

    def _module_value(self, module: str) -> Value:
        """A module by the name code imports it with, canonicalised to its name under the source root."""
        fid = self.module_file(module)
        return ("mod", self.module_name(fid)) if fid is not None else ("ext", module)

    def _param_annotation(self, q: str, idx: int) -> tuple[int, str, str | None] | None:
        """(file, enclosing scope, annotation) of parameter ``idx`` of function ``q``; None if it has no such one."""
        d = self.definition(q)
        if d is None or d[3] not in ("function", "method"):
            return None
        for entries in self.info(d[0]).binds(q).values():
            for e in entries:
                if e[1] == "param" and e[3] == idx:
                    return d[0], d[7], e[2]
        return None

    def _parent(self, fid: int, scope: str) -> str:
        return self.info(fid).parents.get(scope, self.module_name(fid))

    # ---- loop targets, unpacking, parametrize, generator sends -------------------------------------------------------

    def _source(self, fid: int) -> Source | None:
        if self.root is None:
            return None
        got = self._sources.get(fid)
        if got is None:
            # the spans of the definitions let Source parse only the piece a query asks about; a file
            # with a syntax error gets none (the whole parse decides that it answers nothing)
            row = self.conn.execute("SELECT mtime_ns, size, error FROM files WHERE id=?", (fid,)).fetchone()
            spans: list[tuple[int, int, str]] = [] if row is None or row[2] is not None else self.conn.execute(
                "SELECT line, end_line, kind FROM defs WHERE file_id=? AND kind IN ('class', 'function', 'method')",
                (fid,)).fetchall()
            got = Source.load(self.root / self.file(fid)[0], spans, (row[0], row[1]) if row is not None else None)
            self._sources[fid] = got
        return got

    def source_lines(self) -> Iterator[tuple[str, list[bytes]]]:
        """(path, lines with their breaks) of each file this resolver read the source of, for a caller that quotes
        lines of the same files: splitting a file again costs as much as reading it."""
        for fid, src in self._sources.items():
            if src.lines:
                yield self.file(fid)[0], src.lines

    def long_receiver(self, fid: int, line: int, col: int, name: str) -> str | None:
        """The receiver of attribute ``name`` at ``line``:``col`` read from the source, for one the index keeps as
        "?" (too long to store)."""
        src = self._source(fid)
        return src.receiver(line, col, name) if src is not None else None

    def _source_bound(self, fid: int, scope: str, name: str, line: int) -> Value:
        """A ``for`` target or an unpacked name: the type of the element it takes, when the iterable's declared
        type says it (``items: list[Item]``, ``-> tuple[list[Item], Recorder]``, ``d.items()`` of a
        ``dict[str, Field]``) or its literal lists every element (``for f in [A(), B()]``: each of them)."""
        return self._shape_value(self._origin_shape(fid, scope, name, line, 0), 0)

    def _origin_shape(self, fid: int, scope: str, name: str, line: int, depth: int) -> Any:
        src = self._source(fid)
        got = src.origin(name, line) if src is not None else None
        if got is None:
            return None
        key = ("origin", fid, name, line)
        if self._cycle(key):
            return None
        self._stack.add(key)
        try:
            how, text, path = got
            shape = self._shape(fid, scope, text, line, depth + 1)
            if how == "for":
                shape = self._item(shape, depth + 1)
            for i in path:
                shape = self._component(shape, i, depth + 1)
            return shape
        finally:
            self._stack.discard(key)

    def _sent(self, fid: int, scope: str) -> Value:
        """``x = yield ...`` in a generator annotated ``-> Generator[Y, S, R]``: x is what ``send`` passes, an S."""
        d = self.definition(scope)
        ann = (d[8].get("ret") or "") if d is not None and d[3] in ("function", "method") else ""
        text = ann.strip().strip("'\"")
        if text.split("[", 1)[0].rsplit(".", 1)[-1] != "Generator" or not text.endswith("]"):
            return None
        args = _split_top(text[text.index("[") + 1:-1])
        return self.type_of_annotation(fid, self._parent(fid, scope), args[1], 1) if len(args) == 3 else None

    def _literal_of(self, fid: int, scope: str, text: str, line: int,
                    depth: int) -> tuple[tuple[int, str, int], list[str]] | None:
        """The element texts of the list or tuple literal a name holds (assigned once), and where to read them."""
        v = self.eval(fid, scope, text, line, depth + 1)
        if v is None:
            return None
        if v[0] == "local":
            where, value, name = (v[1], v[2], v[5]), v[3], text
        elif v[0] == "def":
            d = self.definition(v[1])
            if d is None or d[3] != "variable" or d[8].get("ann"):
                return None
            where, value, name = (d[0], d[7], d[4]), d[8].get("value"), d[2]
            if len(self.info(d[0]).binds(d[7]).get(d[2], ())) != 1:
                return None  # rebound somewhere: which list is in effect is not proven
        else:
            return None
        if value == "?":
            src = self._source(where[0])
            value = src.assigned(name, where[2]) if src is not None else None
        lit = literal_items(value) if value else None
        return (where, lit[1]) if lit is not None else None

    def _declared(self, fid: int, scope: str, text: str, line: int, depth: int) -> tuple[int, str, str] | None:
        """(file, scope, annotation) that declares the type of expression ``text``, when one does."""
        if (depth > _MAX_DEPTH and self._cut()) or not text:
            return None
        ops = _parse(text)
        if not ops and text.endswith("]"):
            ops = (("name", ""), ("sub", ""))  # only the last step matters below
        if not ops:
            return None
        op = ops[-1][0]
        if len(ops) == 1:
            v = self.lookup(fid, scope, text, line)
            for e in self.info(fid).binds(scope).get(text, ()):
                if e[1] == "param" and e[2]:
                    return fid, self._parent(fid, scope), e[2]
            if v is not None and v[0] == "local":
                if v[4] and not _bare_qualifier(v[4]):
                    return v[1], v[2], v[4]
                return self._declared(v[1], v[2], v[3], v[5], depth + 1) if v[3] and v[3] != "?" else None
            if v is not None and v[0] == "def":
                d = self.definition(v[1])
                if d is not None and d[3] in ("variable", "attribute") and d[8].get("ann"):
                    return d[0], d[7], d[8]["ann"]
            return None
        if op == "attr":
            prefix, attr = text[:text.rfind(".")], ops[-1][1]
            rv = self.type_of(self.eval(fid, scope, prefix, line, depth + 1), depth + 1)
            if rv is None or rv[0] not in ("inst", "def"):
                return None
            m = self.member(rv[1], attr)
            d = self.definition(m) if m else None
            if d is None:
                return None
            if d[3] in ("variable", "attribute"):
                if d[8].get("ann") and not _bare_qualifier(d[8]["ann"]):
                    return d[0], d[7], d[8]["ann"]
                anns = {a for e in self.info(d[0]).binds(d[7]).get(d[2], ()) if e[1] == "attr"
                        and (a := self._declared_attr(d[0], e))}  # `self.x = {}  # type: dict[str, F]` declares
                return (d[0], d[7], anns.pop()) if len(anns) == 1 else None
            decs = d[8].get("decorators", [])
            if d[3] == "method" and any(x in _PROPERTY_DECORATORS for x in decs) and d[8].get("ret"):
                return d[0], d[7], d[8]["ret"]
            return None
        if op == "call":
            open_at = _matching_open(text, "(")
            if open_at is None:
                return None
            v = self.eval(fid, scope, text[:open_at], line, depth + 1)
            q = v[1] if v is not None and v[0] in ("bound", "def") else None
            d = self.definition(q) if q else None
            if d is None or d[3] not in ("function", "method") or not d[8].get("ret"):
                return None
            if not all(_keeps_return(x) for x in d[8].get("decorators", [])):
                return None
            ret = d[8]["ret"]
            return None if ret.strip("'\"").rsplit(".", 1)[-1] == "Self" else (d[0], d[7], ret)
        if op == "sub":
            open_at = _matching_open(text, "[")
            if open_at is None:
                return None
            decl = self._declared(fid, scope, text[:open_at], line, depth + 1)
            if decl is None:
                return None
            index = text[open_at + 1:-1].strip()
            got = _value_ann(decl[2]) or (
                _component_ann(decl[2], int(index)) if index.isdigit() else _item_ann(decl[2], sequence_only=True))
            return (decl[0], decl[1], got) if got else None
        return None

    # Shapes: what an iterable holds, as far as it is known. ("ann", fid, scope, text): declared by an annotation;
    # ("lit", fid, scope, line, texts): a literal whose elements are written out; ("tup", [shapes]): a tuple of
    # known parts; ("seq", shape): an iterable of one element shape; ("alt", [shapes]): one of several;
    # ("val", value): a value, nothing more. None: unknown.

    def _shape(self, fid: int, scope: str, text: str, line: int, depth: int) -> Any:
        if not text or text == "?" or (depth > _MAX_DEPTH and self._cut()):
            return None
        if text[0] in "([{":
            lit = literal_items(text)
            if lit is not None:
                return ("lit", fid, scope, line, lit[1])
            element = comprehension_element(text)  # its loop variables are bound in this scope too
            return ("seq", self._shape(fid, scope, element, line, depth + 1)) if element else None
        if text.isidentifier() and self.info(fid).kinds.get(scope) in ("function", "method"):
            entries = self.info(fid).binds(scope).get(text) or []
            e = (_pick(entries, line) if len(entries) == 1 else self._reaching(fid, scope, text, entries, line)
                 ) if entries else None
            if e is not None and e[1] == "assign" and e[2] is None:  # itself a loop target or unpacked
                return self._origin_shape(fid, scope, text, e[0], depth + 1)
            if e is not None and e[1] == "assign" and len(entries or ()) > 1:  # the one assignment reaching it
                rhs = e[2]
                if rhs == "?":
                    src = self._source(fid)
                    rhs = src.assigned(text, e[0]) if src is not None else None
                return self._shape(fid, scope, rhs, e[0], depth + 1) if rhs else None
        m = _BUILTIN_ITER.fullmatch(text)
        if m and self.lookup(fid, scope, m.group(1), line) in (None, ("builtin", m.group(1))):
            args = [a for a in _split_top(m.group(2)) if a and not re.match(r"^\w+\s*=[^=]", a)]
            if not args or any(a.startswith("*") for a in args):
                return None
            items = [self._item(self._shape(fid, scope, a, line, depth + 1), depth + 1) for a in args]
            if m.group(1) == "enumerate":
                return ("seq", ("tup", [("val", ("ext", "builtins.int")), items[0]]))
            if m.group(1) == "zip":
                return ("seq", ("tup", items))
            return ("seq", items[0])
        m = _DICT_VIEW.fullmatch(text)
        if m:
            decl = self._declared(fid, scope, m.group(1), line, depth + 1)
            kv = _mapping_args(decl[2]) if decl is not None else None
            if decl is not None and kv is not None:
                key = ("ann", decl[0], decl[1], kv[0])
                val = ("ann", decl[0], decl[1], kv[1])
                return ("seq", ("tup", [key, val]) if m.group(2) == "items" else key if m.group(2) == "keys" else val)
        declared = self._declared(fid, scope, text, line, depth + 1)
        if declared is not None:
            return ("ann", *declared)
        value = self.eval(fid, scope, text, line, depth + 1)
        if value is not None and value[0] in ("local", "def"):
            held = self._literal_of(fid, scope, text, line, depth + 1)
            if held is not None:
                return ("lit", held[0][0], held[0][1], held[0][2], held[1])
            rhs = value[3] if value[0] == "local" else None
            if rhs == "?" and text.isidentifier():  # too long for the index: the source has it
                src = self._source(value[1])
                rhs = src.assigned(text, value[5]) if src is not None else None
            if rhs and rhs != "?":
                return self._shape(value[1], value[2], rhs, value[5], depth + 1)
        return ("val", self.type_of(value, depth + 1))

    def _item(self, shape: Any, depth: int) -> Any:
        """The shape of what iterating ``shape`` gives."""
        if shape is None or (depth > _MAX_DEPTH and self._cut()):
            return None
        tag = shape[0]
        if tag == "ann":
            fid, scope, ann = shape[1:]
            if self._declared_class(fid, scope, ann) is None:
                item = _item_ann(ann)
                return ("ann", fid, scope, item) if item else None
            return self._item(("val", self.type_of_annotation(fid, scope, ann, depth + 1)), depth + 1)
        if tag == "lit":
            return ("alt", [self._shape(shape[1], shape[2], t, shape[3], depth + 1) for t in shape[4]])
        if tag == "seq":
            return shape[1]
        if tag == "tup":
            return ("alt", shape[1])
        if tag == "alt":
            return ("alt", [self._item(x, depth + 1) for x in shape[1]])
        v = shape[1]
        if v is not None and v[0] == "inst":  # an indexed iterable class: `def __iter__(self) -> Iterator[Item]`
            m = self.member(v[1], "__iter__")
            d = self.definition(m) if m else None
            if d is not None and d[8].get("ret") and not d[8].get("decorators"):
                item = _item_ann(d[8]["ret"])
                return ("ann", d[0], d[7], item) if item else None
        return None

    def _component(self, shape: Any, i: int, depth: int) -> Any:
        """The shape of element ``i`` when ``shape`` is unpacked (``a, b = shape``)."""
        if shape is None or (depth > _MAX_DEPTH and self._cut()):
            return None
        tag = shape[0]
        if tag == "ann":
            fid, scope, ann = shape[1:]
            if self._declared_class(fid, scope, ann) is not None:
                return self._item(shape, depth + 1)
            part = _component_ann(ann, i)
            return ("ann", fid, scope, part) if part else None
        if tag == "lit":
            return self._shape(shape[1], shape[2], shape[4][i], shape[3], depth + 1) if i < len(shape[4]) else None
        if tag == "tup":
            return shape[1][i] if i < len(shape[1]) else None
        if tag == "alt":
            return ("alt", [self._component(x, i, depth + 1) for x in shape[1]])
        return self._item(shape, depth + 1)  # unpacking iterates: `(a,) = items`

    def _shape_value(self, shape: Any, depth: int) -> Value:
        if shape is None or (depth > _MAX_DEPTH and self._cut()):
            return None
        tag = shape[0]
        if tag == "ann":
            return self.type_of_annotation(shape[1], shape[2], shape[3], depth + 1)
        if tag in ("lit", "tup", "seq"):
            return None  # a container: what is asked of it is a builtin's method at most, never an indexed one
        if tag == "alt":
            got = {self._shape_value(x, depth + 1) for x in shape[1]}
            if None in got or not got:
                return None
            return got.pop() if len(got) == 1 else ("union", tuple(sorted(got, key=repr)))
        return shape[1]

    def _declared_class(self, fid: int, scope: str, ann: str) -> str | None:
        """The indexed class an annotation names (then it is no typing container, whatever it is called)."""
        v = self.type_of_annotation(fid, scope, ann, 1)
        return v[1] if v is not None and v[0] == "inst" else None

    # ---- expressions -------------------------------------------------------------------------------------------

    def receiver_type(self, fid: int, scope: str, recv: str, line: int) -> Value:
        """The type of receiver ``recv`` of an occurrence: ``type_of(eval(...))``, remembered, because classifying
        one occurrence asks it twice (bound to the name? else why not) and a query may classify it for several
        symbols of one name."""
        key = (fid, scope, recv, line)
        if key in self._receiver:
            return self._receiver[key]
        free = self._read_outside(fid, scope, recv)  # the same type on every line of the file: kept per file
        got = self._receiver[key] = (self._typed(fid, scope, recv, line) if free is None
                                     else self._clean_memo(self._free, free, self._typed, fid, scope, recv, line))
        return got

    def _typed(self, fid: int, scope: str, text: str, line: int) -> Value:
        return self.type_of(self.eval(fid, scope, text, line))

    def _read_outside(self, fid: int, scope: str, recv: str) -> tuple[int, str] | None:
        """(file, receiver) when receiver ``recv`` in function ``scope`` has the same type from every line of every
        function of the file, else None.

        So it is when its head name is bound in no function (nor class) scope around: then the head is the
        module's binding or a star import's (:meth:`_outer_binding`, :meth:`_unbound`), and what follows depends
        on the head's value alone. ``Book.objects`` is read in hundreds of test methods of one file. Left out: the
        forms whose evaluation reads the line or scope (``super()``, a subscript, ``staticmethod(...)``,
        ``partial(...)``).
        """
        info = self.info(fid)
        if info.kinds.get(scope) not in ("function", "method") or "[" in recv or recv.startswith(
                ("staticmethod", "classmethod", "partial", "functools.partial")):
            return None
        ops = _parse(recv)
        if not ops or ops[0][1] == "super":
            return None
        head = ops[0][1]
        key = (fid, scope, head)
        outside = self._outside.get(key)
        if outside is None:
            outside = self._outside[key] = self._unbound_around(info, fid, scope, head)
        return (fid, recv) if outside else None

    def _unbound_around(self, info: FileInfo, fid: int, scope: str, name: str) -> bool:
        """Whether :meth:`lookup` of ``name`` from function ``scope`` finds no binding before the module's (it
        walks the same scopes: class bodies skipped, a ``global`` name read from the module)."""
        if name in info.get("globals", {}).get(scope, ()):
            return True
        s: str | None = scope
        while s is not None:
            kind = info.kinds.get(s, "module")
            if kind == "module":
                return True
            if (s == scope or kind != "class") and info.entries(s, name):
                return False
            parent = info.parents.get(s)
            s = parent if parent is not None else self.module_name(fid)
        return True

    def eval(self, fid: int, scope: str, text: str | None, line: int, depth: int = 0) -> Value:
        """Evaluate a simple expression (dotted names, calls, ``super()``) to a value; anything else is unknown."""
        if not text or text == "?" or (depth > _MAX_DEPTH and self._cut()):
            return None
        # (the prefix tests first: the regular expressions cost more than most of an evaluation)
        wrapped = _METHOD_WRAPPER.fullmatch(text) if text.startswith(("staticmethod", "classmethod")) else None
        if wrapped and self.lookup(fid, scope, wrapped.group(1), line) is None:
            text = wrapped.group(2)  # `maker = staticmethod(make)`: called through the class, it is `make`
        partial = _PARTIAL.fullmatch(text) if text.startswith(("partial", "functools.partial")) else None
        if partial and self.eval(fid, scope, partial.group(1), line, depth + 1) == ("ext", "functools.partial"):
            # `functools.partial(Enum, Color)`: calling it calls Enum; the partial object itself has no methods
            inner = self.eval(fid, scope, partial.group(2), line, depth + 1)
            return ("partial", inner) if inner is not None else None
        ops = _parse(text)
        if not ops:
            return None
        if "[" in text and any(op == "sub" for op, _ in ops):  # a subscript is written with a bracket
            return self._eval_subscripted(fid, scope, text, line, depth)
        key = ("eval", fid, scope, text, line)
        if self._cycle(key):
            return None
        self._stack.add(key)
        try:
            return self._eval_ops(fid, scope, ops, line, depth)
        finally:
            self._stack.discard(key)

    def _eval_subscripted(self, fid: int, scope: str, text: str, line: int, depth: int) -> Value:
        """``s.fields["name"].load``: the item's type from the declared type of what is subscripted (a
        ``dict[str, Field]`` attribute, a ``list[Item]`` return), then the rest of the chain as usual."""
        cut = _after_last_subscript(text)
        if cut is None:
            return None
        decl = self._declared(fid, scope, text[:cut], line, depth + 1)
        value = self.type_of_annotation(*decl, depth + 1) if decl is not None else None
        rest = _parse("x" + text[cut:])[1:] if cut < len(text) else ()
        if cut < len(text) and not rest:
            return None
        return self._apply(fid, value, rest, depth)

    def _eval_ops(self, fid: int, scope: str, ops: tuple[tuple[str, str], ...], line: int, depth: int) -> Value:
        head = ops[0]
        if head[0] != "name":
            return None
        rest = ops[1:]
        if head[1] == "super" and rest and rest[0][0] == "call":
            cls = self._enclosing_class(fid, scope)
            if cls is None:
                return None
            value: Value = ("super", cls)
            rest = rest[1:]
        else:
            value = self.lookup(fid, scope, head[1], line)
            if value is not None and value[0] == "def" and self.info(fid).kinds.get(scope) == "class":
                value = self._class_body_value(fid, scope, value, line)
        if not rest:
            return self._apply(fid, value, rest, depth)
        # what follows the head depends on the head's value alone, and `Book.objects...` is read in hundreds of
        # places of one query: remembered as (value, the depth it was computed at, whether it met no cycle guard
        # nor depth limit). A receiver evaluated for its own sake (depth 0, only its own guard up) takes whatever
        # is kept; a nested evaluation takes only a value that met none, computed at its depth or deeper (from
        # less deep, the limit would be met no sooner: the same value)
        top = depth == 0 and len(self._stack) == 1
        key = (value, rest)
        kept = self._chain.get(key)
        if kept is not None and (top or (kept[2] and depth <= kept[1])):
            return kept[0]
        cuts = self._cuts
        got = self._apply(fid, value, rest, depth)
        clean = self._cuts == cuts
        if (top and kept is None) or (clean and (kept is None or (kept[2] and depth > kept[1]))):
            self._chain[key] = (got, depth, clean)
        return got

    def _apply(self, fid: int, value: Value, rest: tuple[tuple[str, str], ...], depth: int) -> Value:
        for op, arg in rest:
            if value is None:
                return None
            if op == "attr":
                typ = self.type_of(value, depth)
                value = self.attribute(typ, arg)
                if value is None and typ is not None and typ[0] == "inst":
                    value = self._forwarded(typ[1], depth)
            elif op == "call":
                value = self.call(value, depth)
            else:
                return None
        return value

    def _class_body_value(self, fid: int, scope: str, value: tuple[Any, ...], line: int) -> Value:
        """A class variable read in its own class body is the value assigned, not its annotation: under
        ``y: list = attrs.field()``, ``@y.validator`` is the field's, not a list's."""
        d = self.definition(value[1])
        if d is None or d[3] != "variable" or d[7] != scope or not d[8].get("ann") or not d[8].get("value"):
            return value
        return ("local", fid, scope, d[8]["value"], None, line)

    def _forwarded(self, cls: str, depth: int) -> Value:
        """An attribute the class does not have, read through its ``__getattr__``: typed by its return annotation
        (``def __getattr__(self, name) -> HookCaller``); only ever a receiver, never the name being looked for."""
        g = self.member(cls, "__getattr__")
        if g is None:
            return None
        d = self.definition(g)
        return self.returns(g, depth=depth + 1) if d is not None and d[8].get("ret") else None

    def _enclosing_class(self, fid: int, scope: str) -> str | None:
        info = self.info(fid)
        kinds, parents = info.kinds, info.parents
        s: str | None = scope
        while s is not None and kinds.get(s, "module") != "module":
            if kinds.get(s) == "class":
                return s
            s = parents.get(s)
        return None

    def type_of(self, value: Value, depth: int = 0) -> Value:
        """Turn a binding into what it holds: a variable into its assigned/annotated value."""
        if value is None or (depth > _MAX_DEPTH and self._cut()):
            return None
        if value[0] == "prop":
            return self.returns(value[1], depth=depth + 1)
        if value[0] == "local":
            _, fid, scope, rhs, ann, line = value
            if ann and not _bare_qualifier(ann):
                return self.type_of_annotation(fid, scope, ann, depth + 1)
            literal = _literal_type(rhs)
            if literal is not None:
                return ("ext", f"builtins.{literal}")
            return self.type_of(self.eval(fid, scope, rhs, line, depth + 1), depth + 1)
        if value[0] == "def":
            d = self.definition(value[1])
            if d is None:
                return None
            if d[3] in ("function", "method") and d[8].get("decorators"):
                return self.decorated(value[1], depth + 1)
            if d[3] in ("variable", "attribute"):
                data = d[8]
                fid, parent = d[0], d[7]
                if data.get("ann") and not _bare_qualifier(data["ann"]):
                    return self.type_of_annotation(fid, parent, data["ann"], depth + 1)
                if d[3] == "attribute":
                    return self._attribute_type(fid, value[1], depth)
                return self.type_of(self.eval(fid, parent, data.get("value"), d[4], depth + 1), depth + 1)
        return value

    def _attribute_type(self, fid: int, q: str, depth: int) -> Value:
        """self.x assigned in a method: typed by the value of its first assignment, evaluated in that method."""
        d = self.definition(q)
        if d is None:
            return None
        cls, name = d[7], d[2]
        info = self.info(fid)
        entries = [e for e in info.binds(cls).get(name, []) if e[1] == "attr"]
        declared = {a for a in (self._declared_attr(fid, e) for e in entries) if a and not _bare_qualifier(a)}
        if declared:
            # declared (`self.x: X = ...`, `self.x = {}  # type: dict[str, X]`) in any method: that is the type
            return self.type_of_annotation(fid, cls, declared.pop(), depth + 1) if len(declared) == 1 else None
        found: Value = None
        for entry in entries:
            if entry[2] == "None":
                continue  # `self.x = None` until set: the other assignments say what it holds
            method = self._method_at(info, cls, entry[0])
            v = self.type_of(self.eval(fid, method, entry[2], entry[0], depth + 1), depth + 1) if method else None
            if v is None or (found is not None and v != found):
                return None  # assigned something unknown, or different types in different methods
            found = v
        return found

    def _declared_attr(self, fid: int, entry: tuple[Any, ...]) -> str | None:
        """The annotation of one ``self.x = ...`` assignment, or its ``# type:`` comment (read from the source, for
        the empty or None values such comments are written on)."""
        if entry[3]:
            return str(entry[3])
        if entry[2] != "None" and _literal_type(entry[2]) is None and entry[2] not in ("set()", "dict()", "list()"):
            return None
        src = self._source(fid)
        return src.type_comment(entry[0]) if src is not None else None

    def _method_at(self, info: FileInfo, cls: str, line: int) -> str | None:
        for q, parent in info.parents.items():
            if parent == cls and info.kinds.get(q) == "method":
                d = self.definition(q)
                if d is not None and d[4] <= line <= d[6]:
                    return q
        return None

    def type_of_annotation(self, fid: int, scope: str, ann: str, depth: int) -> Value:
        text = ann.strip().strip("'\"")
        for wrapper in _WRAPPERS:
            if text.startswith(wrapper) and text.endswith("]"):
                text = _split_top(text[len(wrapper):-1])[0].strip("'\"")
        if text.startswith("Optional[") and text.endswith("]"):
            text = text[9:-1]
        if "|" in text:
            parts = [p.strip() for p in text.split("|") if p.strip() != "None"]
            if len(parts) != 1:
                return None
            text = parts[0]
        if text.startswith(("type[", "Type[")) and text.endswith("]"):
            v = self.eval(fid, scope, text[5:-1], 0, depth + 1)
            return v if v is not None and v[0] == "def" else None
        base = text.split("[", 1)[0]
        if base in _BUILTIN_TYPES or base in _TYPING_CONTAINERS:
            v = self.lookup(fid, scope, base.rsplit(".", 1)[-1], 0) if "." not in base else None
            if v is None or v[0] in ("builtin", "ext"):  # not shadowed by an indexed class of that name
                return ("ext", f"builtins.{base}")
        v = self.eval(fid, scope, _unsubscript(text), 0, depth + 1)
        if v is not None and v[0] == "def":
            d = self.definition(v[1])
            if d is not None and d[3] == "class":
                return ("inst", v[1])  # `Result[T]`: an instance of the generic class
        return None

    def attribute(self, value: Value, attr: str) -> Value:
        if value is None:
            return None
        tag = value[0]
        if tag == "mod":
            return self._clean_memo(self._mod_attr, (value[1], attr), self._module_attribute, value[1], attr)
        if tag == "ext":
            return ("ext", f"{value[1]}.{attr}")
        if tag == "ctx":
            return ("ctxenter", value[1]) if attr in ("__enter__", "__aenter__") else None
        if tag == "union":
            got = {self.attribute(t, attr) for t in value[1]}
            if len(got) == 1:
                return got.pop()
            heads = {g[:2] if g is not None and g[0] == "bound" else g for g in got}
            head = heads.pop() if len(heads) == 1 else None
            # one method reached through different receiver classes: bound, but to no single class (for `-> Self`)
            return ("bound", head[1], "") if head is not None else None
        if tag == "super":
            for c in self.mro(value[1])[1:]:
                if self.definition(f"{c}.{attr}") is not None:
                    return ("def", f"{c}.{attr}")
            return None
        if tag in ("def", "inst"):
            d = self.definition(value[1])
            if d is None or d[3] != "class":
                return None
            if tag == "inst" and attr == "__class__":
                return ("def", value[1])  # `self.__class__.make()`: the class, as `self` is an instance of it
            m = self.member(value[1], attr)
            if m is None:
                return None
            md = self.definition(m)
            if tag == "inst" and md is not None and md[3] == "method":
                decs = md[8].get("decorators", [])
                if any(x in _PROPERTY_DECORATORS or x.endswith(".setter") for x in decs):
                    return ("prop", m)
                return ("bound", m, value[1])  # remembers the receiver's class, for `-> Self` and `return self`
            return ("def", m)
        return None

    def call(self, value: Value, depth: int) -> Value:
        if value is None or (depth > _MAX_DEPTH and self._cut()):
            return None
        if value[0] == "partial":
            return self.call(value[1], depth + 1)
        if value[0] == "union":  # a parameter given several classes: calling it makes one of their instances
            got = {self.call(t, depth + 1) for t in value[1]}
            if None in got:
                return None
            return got.pop() if len(got) == 1 else ("union", tuple(sorted(got, key=repr)))
        if value[0] == "bound":
            return self.returns(value[1], depth=depth, self_cls=value[2])
        if value[0] == "ctxenter":  # `with cm() as x`: what the generator yields
            return self.returns(value[1], fixture=True, depth=depth + 1)
        if value[0] == "def":
            d = self.definition(value[1])
            if d is None:
                return None
            if d[3] == "class":
                return ("inst", value[1])
            if d[3] in ("function", "method"):
                return self.returns(value[1], depth=depth)
            return self.call(self.type_of(value, depth), depth + 1) if d[3] in ("variable", "attribute") else None
        if value[0] == "local":
            return self.call(self.type_of(value, depth), depth + 1)
        if value[0] == "builtin" and value[1] in _BUILTIN_TYPES:
            return ("ext", f"builtins.{value[1]}")  # dict(...), str(...): instances of builtin types
        return None

    def returns(self, q: str, fixture: bool = False, depth: int = 0, self_cls: str | None = None) -> Value:
        """What calling function ``q`` gives: its return annotation, else the value of its return statements."""
        d = self.definition(q)
        if d is None or (depth > _MAX_DEPTH and self._cut()):
            return None
        fid, parent, data = d[0], d[7], d[8]
        decs = data.get("decorators", ())
        if not fixture and decs:
            if any(x.split("(", 1)[0] in _CONTEXT_MANAGERS for x in decs):
                if all(_keeps_return(x) or x.split("(", 1)[0] in _CONTEXT_MANAGERS for x in decs):
                    return ("ctx", q)
                return None
            if self.decorated(q, depth + 1) != ("def", q):
                return None  # `@deco def f() -> A`: calling f calls whatever deco returned
        ann = data.get("ret")
        generator = ann is not None and ann.split("[")[0].split(".")[-1] in ("Iterator", "Generator")
        if ann and ann.strip("'\"").split(".")[-1] == "Self" and d[3] == "method":
            return ("inst", self_cls or parent) if self_cls != "" else None
        if ann and not (fixture and generator):
            return self.type_of_annotation(fid, parent, ann, depth + 1)
        info = self.info(fid)
        sources = (info.get("yields", {}).get(q) if fixture else None) or info.get("returns", {}).get(q) or []
        found: Value = None
        for line, expr in sources:
            if expr == "None":
                continue
            if expr == "self" and self_cls == "":
                return None  # the receiver is one of several classes
            if expr == "self" and self_cls is not None:
                if found is not None and found != ("inst", self_cls):
                    return None
                found = ("inst", self_cls)
                continue
            v = self.type_of(self.eval(fid, q, expr, line, depth + 1), depth + 1)
            if v is None or (found is not None and v != found):
                return None
            found = v
        return found


    # ---- provided by the rule families (each stub names the module that holds the method) ----------------------------

    def mro(self, cls: str) -> list[str]:
        raise NotImplementedError  # classes.py

    def member(self, cls: str, attr: str) -> str | None:
        raise NotImplementedError  # classes.py

    def decorated(self, q: str, depth: int = 0) -> Value:
        raise NotImplementedError  # decorators.py

    def _takes_fixture(self, fid: int, scope: str, name: str) -> bool:
        raise NotImplementedError  # fixtures.py

    def fixture(self, fid: int, name: str, scope: str = "") -> Value:
        raise NotImplementedError  # fixtures.py

    def _parametrized(self, fid: int, scope: str, name: str) -> Value:
        raise NotImplementedError  # fixtures.py

    def _param(self, fid: int, scope: str, name: str, ann: str | None, idx: int) -> Value:
        raise NotImplementedError  # params.py
