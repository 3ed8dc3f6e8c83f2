"""Decorators: what the name of a decorated function holds.

A decorator is applied innermost first, and the name keeps the function only when each decorator provably returns
what it is given: the ones the language and the standard library keep (``staticmethod``, ``classmethod``,
``functools.wraps``-based, ``lru_cache``, ``property``), one whose body wraps with ``functools.wraps``, one annotated
``(f: F) -> F`` or ``Callable[P, R] -> Callable[P, R]`` (also through ``Concatenate``). A decorator annotated to
return a class (``-> Pipeline``, a factory ``-> Callable[[F], Pipeline]``, across ``@overload`` signatures) makes the
name an instance of that class, and a TypeVar result is its bound unless an argument the call passes decides it
(``cls=MyGroup`` for ``cls: type[G]``, as click's ``group`` does). Everything else makes the name unknown, so its
calls stay ambiguous: an unannotated decorator, one from outside the index, one whose overloads disagree.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

from tomo.prism.resolve.core import _MAX_DEPTH, Core, Value
from tomo.prism.resolve.text import _CONTEXT_MANAGERS, _callable_args, _keeps_return, _redefined, _split_top


class Decorators(Core):
    _decorated: dict[str, Value]

    def __init__(self, conn: sqlite3.Connection, root: Path | None = None) -> None:
        super().__init__(conn, root)
        self._decorated = {}

    def decorated(self, q: str, depth: int = 0) -> Value:
        """What the name of decorated function ``q`` holds: the decorators' result, applied innermost first.

        A decorator known to keep the function (``staticmethod``, ``functools.wraps``-based, ``lru_cache``, one
        annotated ``(f: F) -> F``) keeps ``("def", q)``; one annotated to return a class (``-> Pipeline``, a factory
        ``-> Callable[[F], Pipeline]``, through overloads) gives an instance of it; any other makes it unknown.
        """
        if q in self._decorated:
            return self._decorated[q]
        key = ("decorated", q)
        if self._cycle(key) or (depth > _MAX_DEPTH and self._cut()):
            return None
        d = self.definition(q)
        if d is None:
            return None
        self._stack.add(key)
        try:
            value: Value = ("def", q)
            for dec in reversed(d[8].get("decorators", [])):
                if _keeps_return(dec) or dec.split("(", 1)[0] in _CONTEXT_MANAGERS or dec.split("(", 1)[0] in (
                        "overload", "typing.overload", "t.overload"):
                    continue
                got = self._decorator_result(d[0], d[7], dec, d[4], depth + 1)
                value = value if got == ("keep",) else got  # an annotated result does not depend on its input
            self._decorated[q] = value
            return value
        finally:
            self._stack.discard(key)

    def _decorator_result(self, fid: int, scope: str, dec: str, line: int, depth: int) -> Value:
        """("keep",) when decorator ``dec`` returns the function it is given, else what it returns, or None."""
        factory = dec.endswith(")") and "(" in dec
        head = dec.split("(", 1)[0] if factory else dec
        v = self.eval(fid, scope, head, line, depth)
        if v is not None and v[0] == "bound":
            v = ("def", v[1])  # `@cli.group()`: a method of an instance (its `self` is not among the arguments)
        if v is None or v[0] != "def":
            return None
        d = self.definition(v[1])
        if d is None:
            return None
        if d[3] == "class":
            return None if factory else ("inst", v[1])
        if d[3] not in ("function", "method"):
            return None
        if self._wraps_based(v[1]):
            return ("keep",)
        results: set[Value] = set()
        for q in self._overloads(v[1]):
            od = self.definition(q)
            ann = od[8].get("ret") if od else None
            if not ann or od is None:
                if not factory:
                    results.add(None)
                continue
            first = self._param_annotation(q, 0)
            if not factory and first is not None and first[2] and first[2] == ann:
                results.add(("keep",))  # `(f: Callable[P, R]) -> Callable[P, R]`
                continue
            args = _callable_args(ann, result=True)
            if not factory and args is not None and first is not None and first[2]:
                given = _callable_args(first[2], result=True)
                if given is not None and given[-1] == args[-1]:
                    results.add(("keep",))  # `(f: Callable[Concatenate[Ctx, P], R]) -> Callable[P, R]`: still R
                    continue
            if factory != (args is not None):
                continue  # this overload is for the other way of using the decorator
            text = args[-1] if args is not None else ann
            if args is not None and len(args) == 2 and args[0] == text:
                results.add(("keep",))  # Callable[[F], F]
            elif self._is_typevar(od[0], od[7], text):
                got = self._typevar_result(q, od, text, dec if factory else "", (fid, scope, line), depth)
                if got is not None and got[0] == "decided":
                    return got[1]  # the first overload whose parameter the call passes is the one that applies
                results.add(got)
            else:
                results.add(self.type_of_annotation(od[0], od[7], text, depth + 1))
        return results.pop() if len(results) == 1 else None

    def _overloads(self, q: str) -> list[str]:
        """The ``@overload`` signatures of function ``q`` when it has some, else ``q`` itself."""
        base = _redefined(q)
        out = []
        for i in range(0, 32):
            cand = base if i == 0 else f"{base}@{i}"
            cd = self.definition(cand)
            if cd is None:
                break
            if any(x.split("(", 1)[0] in ("overload", "typing.overload", "t.overload")
                   for x in cd[8].get("decorators", [])):
                out.append(cand)
        return out or [q]

    def _wraps_based(self, q: str) -> bool:
        """Whether a function nested in ``q`` is decorated ``@functools.wraps(...)``: the usual keeping decorator."""
        d = self.definition(q)
        if d is None:
            return False
        for s in self.info(d[0]).scopes:
            if s.startswith(q + "."):
                sd = self.definition(s)
                if sd is not None and any(x.split("(", 1)[0] in ("wraps", "functools.wraps")
                                          for x in sd[8].get("decorators", [])):
                    return True
        return False

    def _typevar_result(self, q: str, od: tuple[Any, ...], text: str, call: str, where: tuple[int, str, int],
                        depth: int) -> Value:
        """A decorator returning a TypeVar that is not its function's type: the TypeVar's bound, unless an argument
        the call passes decides it: ``cls=MyGroup`` for ``cls: type[GrpType]`` gives a MyGroup when MyGroup is an
        indexed class, else the name is unknown. Not passed, the TypeVar is its bound, whichever overload applies."""
        name = text.strip("'\"")
        word = re.compile(rf"\b{re.escape(name)}\b")
        args = [a for a in _split_top(call[call.index("(") + 1:-1]) if a] if call else []
        positional = sum(1 for a in args if not re.match(r"^\w+\s*=[^=]", a))
        if self.info(od[0]).kinds.get(od[1]) == "method":
            positional += 1  # the receiver takes the first parameter
        for pname, entries in self.info(od[0]).binds(od[1]).items():
            for e in entries:
                if e[1] == "param" and e[2] and word.search(e[2]) and (
                        any(re.match(rf"^{re.escape(pname)}\s*=[^=]", a) for a in args) or positional > e[3]):
                    given = [a.split("=", 1)[1].strip() for a in args if re.match(rf"^{re.escape(pname)}\s*=[^=]", a)]
                    ann = e[2].replace(" ", "")
                    if given and re.fullmatch(rf"(type|Type|t\.Type|typing\.Type)\[{re.escape(name)}\](\|None)?", ann):
                        v = self.eval(where[0], where[1], given[0], where[2], depth + 1)
                        cd = self.definition(v[1]) if v is not None and v[0] == "def" else None
                        return ("decided", ("inst", v[1]) if v is not None and cd is not None and cd[3] == "class"
                                else None)
                    return ("decided", None)  # decided by an argument prism does not follow
        v = self.eval(od[0], od[7], name, 0)
        d = self.definition(v[1]) if v is not None and v[0] == "def" else None
        m = re.search(r"\bbound\s*=\s*([\w.\'\"]+)", d[8].get("value") or "") if d is not None else None
        return self.type_of_annotation(d[0], d[7], m.group(1), depth + 1) if d is not None and m else None

    def _is_typevar(self, fid: int, scope: str, text: str) -> bool:
        v = self.eval(fid, scope, text.strip("'\""), 0)
        d = self.definition(v[1]) if v is not None and v[0] == "def" else None
        value = d[8].get("value") if d is not None and d[3] == "variable" else None
        return isinstance(value, str) and value.split("(", 1)[0].rsplit(".", 1)[-1] == "TypeVar"
