"""Parameters: what an unannotated parameter holds, typed from elsewhere.

An annotated parameter is its annotation, ``self`` an instance of its class, ``cls`` the class. Otherwise the rules
below are asked in order, the first that applies deciding: a parameter the innermost decorator injects (its own
parameter says so, ``fn: Callable[[Session], R]``); the overridden method's annotation of the same position; pytest's
fixture or parametrize values (fixtures.py); the callers, for a test helper called with a fixture and for a private
function or method (``_name``): typed only when every use of the name in the index is a call that provably reaches
this function and all of them pass values of one known type. One use prism cannot follow (the function passed around,
an untyped receiver, a ``*args`` call) and the parameter stays unknown, so what it is used for stays ambiguous;
public functions are never typed from their callers (code outside the index may call them).
"""

from __future__ import annotations

import marshal
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from tomo.prism.pyextract import CALL as _CALL
from tomo.prism.pyextract import DEF as _DEF
from tomo.prism.pyextract import IMPORT as _IMPORT
from tomo.prism.pyextract import KWARG as _KWARG
from tomo.prism.pyextract import MODPATH as _MODPATH
from tomo.prism.pyextract import STRING as _STRING
from tomo.prism.resolve.core import Core, Value
from tomo.prism.resolve.text import _call_argument, _callable_args, _keeps_return, _private


class Params(Core):
    _memo: dict[tuple[str, str, str], Value]
    _arg_lines: dict[int, list[str]]

    def __init__(self, conn: sqlite3.Connection, root: Path | None = None) -> None:
        super().__init__(conn, root)
        self._memo = {}
        self._arg_lines = {}  # file id -> its text's lines, for reading call arguments

    def _param(self, fid: int, scope: str, name: str, ann: str | None, idx: int) -> Value:
        if ann:
            return self.type_of_annotation(fid, self._parent(fid, scope), ann, 0)
        info = self.info(fid)
        if idx == 0 and info.kinds.get(scope) == "method":
            cls = info.parents[scope]
            d = self.definition(scope)
            decs = d[8].get("decorators", []) if d else []
            if "staticmethod" in decs:
                return self._private_callers(fid, scope, name, idx) if _private(scope.rsplit(".", 1)[-1]) else None
            if "classmethod" in decs:
                return ("def", cls)
            return ("inst", cls)
        injected = self._injected(fid, scope, idx)
        if injected is not None:
            return injected
        if idx > 0 and info.kinds.get(scope) == "method":
            inherited = self._overridden_param(fid, scope, idx)
            if inherited is not None:
                return inherited
        if self._takes_fixture(fid, scope, name):
            return self.fixture(fid, name, scope)
        parametrized = self._parametrized(fid, scope, name)
        if parametrized is not None:
            return parametrized
        if self.fixture(fid, name, scope) is not None:  # a test helper called with the fixture, most likely
            return self._from_call_sites(fid, scope, name, idx)
        if _private(scope.rsplit(".", 1)[-1]):
            return self._private_callers(fid, scope, name, idx)
        return None

    def _injected(self, fid: int, scope: str, idx: int) -> Value:
        """A parameter the innermost decorator passes: its own parameter says so, ``fn: Callable[[Session], R]``."""
        d = self.definition(scope)
        decs = d[8].get("decorators", []) if d else []
        if not decs or "(" in decs[-1]:
            return None
        dv = self.eval(fid, self._parent(fid, scope), decs[-1], d[4] if d else 0)
        if dv is None or dv[0] != "def":
            return None
        got = self._param_annotation(dv[1], 0)
        if got is None or not got[2]:
            return None
        args = _callable_args(got[2])
        if args is None or idx >= len(args):
            return None
        return self.type_of_annotation(got[0], got[1], args[idx], 1)

    def _overridden_param(self, fid: int, scope: str, idx: int) -> Value:
        """An unannotated parameter of a method that overrides one: the overridden method's annotation types it."""
        cls = self.info(fid).parents.get(scope)
        if cls is None:
            return None
        mname = scope.rsplit(".", 1)[-1]
        for base in self.mro(cls)[1:]:
            got = self._param_annotation(f"{base}.{mname}", idx)
            if got is not None and got[2]:
                return self.type_of_annotation(got[0], got[1], got[2], 1)
        return None

    def _private_callers(self, fid: int, scope: str, name: str, idx: int) -> Value:
        """An untyped parameter of a private function or method (``_name``: nothing outside its module or class
        hierarchy calls it), typed by what every call in the index passes to it.

        Proven only when every use of the name in the index is a call that provably reaches this very function
        (``self._store(...)`` with ``self`` of its class, ``_helper(...)`` bound to it) and each passes a value of
        one and the same known type; one use prism cannot follow (passed around, an untyped receiver) and the
        parameter stays unknown.
        """
        key = ("private", scope, name)
        if key in self._memo:
            return self._memo[key]
        if self._cycle(key) or self.root is None:
            return None
        d = self.definition(scope)
        info = self.info(fid)
        if d is None or info.kinds.get(scope) not in ("function", "method"):
            return None
        decs = d[8].get("decorators", [])
        if any(not (_keeps_return(x) or x in ("staticmethod", "classmethod")) for x in decs):
            return None  # a decorator may change what the callers pass
        shift = 1 if info.kinds.get(scope) == "method" and "staticmethod" not in decs else 0
        if idx < shift:
            return None
        self._stack.add(key)
        try:
            fname = scope.rsplit(".", 1)[-1]
            found: Value = None
            for ofid, oscope, line, col, recv, flags in self._uses(fname):
                if recv is None:
                    bound = self.lookup(ofid, oscope, fname, line)
                else:
                    rv = self.type_of(self.eval(ofid, oscope, recv, line))
                    bound = self.attribute(rv, fname) if rv is not None and rv[0] in ("inst", "def") else None
                if bound is None or bound[0] not in ("def", "bound"):
                    return None  # a use prism cannot follow: it may reach this function with anything
                if bound[1] != scope:
                    continue  # another function or method of the same name, provably
                if not flags & _CALL:
                    return None  # passed around: called with anything
                v = self._passed_type(ofid, oscope, line, col + len(fname), idx - shift, name)
                if v is None or (found is not None and v != found):
                    return None
                found = v
            self._memo[key] = found
            return found
        finally:
            self._stack.discard(key)

    def _from_call_sites(self, fid: int, scope: str, name: str, idx: int) -> Value:
        """An untyped parameter of a module-level function, typed by what every call in the index passes to it.

        Proven only when the function is used nowhere but in plain calls ``f(...)`` and each of them passes a value
        of one and the same known type (for a test helper: the test's fixture).
        """
        info = self.info(fid)
        module = self.module_name(fid)
        if self.root is None or info.parents.get(scope) != module or info.kinds.get(scope) != "function":
            return None
        key = ("callsites", scope, name)
        if self._cycle(key):
            return None
        self._stack.add(key)
        try:
            fname = scope.rsplit(".", 1)[-1]
            found: Value = None
            calls = 0
            for ofid, oscope, line, col, recv, flags in self._uses(fname):
                bound = self.lookup(ofid, oscope, fname, line) if recv is None else ("?",)
                if bound != ("def", scope) and recv is None:
                    continue  # another binding of the same name
                if recv is not None or not flags & _CALL:
                    return None  # passed around or called through an attribute: callers unknown
                v = self._passed_type(ofid, oscope, line, col + len(fname), idx, name)
                if v is None or (found is not None and v != found):
                    return None
                found, calls = v, calls + 1
            return found if calls else None
        finally:
            self._stack.discard(key)

    def _uses(self, fname: str) -> Iterator[tuple[int, str, int, int, str | None, int]]:
        """Every use of ``fname`` in the index that may call it, as (file id, scope, line, col, receiver, flags):
        definitions, strings, module paths, imports and keyword arguments left out. What the callers of a function
        pass is read from these."""
        for ofid, blob in self.conn.execute("SELECT file_id, data FROM refs WHERE name=?", (fname,)).fetchall():
            scopes = self.info(ofid).scopes
            for line, col, sidx, recv, flags in marshal.loads(blob):
                if not flags & (_DEF | _STRING | _MODPATH | _IMPORT | _KWARG):
                    yield ofid, scopes[sidx], line, col, recv, flags

    def _passed_type(self, fid: int, scope: str, line: int, after_name: int, idx: int, name: str) -> Value:
        """The type of what the call whose callee name ends at ``line``:``after_name`` passes for parameter ``name``
        (position ``idx``), or None when it cannot tell."""
        if self.root is None:
            return None
        lines = self._arg_lines.get(fid)
        if lines is None:
            try:
                lines = (self.root / self.file(fid)[0]).read_text("utf-8", "replace").split("\n")
            except OSError:
                lines = []
            self._arg_lines[fid] = lines
        arg = _call_argument(lines, line, after_name, idx, name)
        return self.type_of(self.eval(fid, scope, arg, line)) if arg else None
