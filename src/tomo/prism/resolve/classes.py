"""Classes: what a class inherits, and what prism cannot see of it.

An attribute of an instance or class is its class's own, else the first of its bases, in the method resolution order
built from the bases that resolve to indexed classes (``class Engine(Base)``, a generic ``Base[T]``). A class with a
base outside the index (``class Cli(click.Group)``) may get any attribute from it: :meth:`has_unknown_base` says so,
and a name its indexed classes lack stays ambiguous instead of being called missing. A receiver of an abstract class
(one that keeps an ``@abstractmethod``) is one of its subclasses, so a call there is ambiguous when a subclass
overrides the method (:meth:`overridden_below`); a concrete class's receiver is read as that class. Not proven: which
subclass a receiver of a concrete base really is at run time, metaclasses, ``__getattr__`` (see attributes.py), bases
computed at run time.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tomo.prism.resolve.core import Core
from tomo.prism.resolve.text import _NEUTRAL_BASES, _unsubscript, same_name


class Classes(Core):
    _mro: dict[str, list[str]]
    _member: dict[tuple[str, str], str | None]
    _below: dict[tuple[str, str, str], str | None]
    _methods: dict[str, list[str]]
    _abstract: dict[str, bool]

    def __init__(self, conn: sqlite3.Connection, root: Path | None = None) -> None:
        super().__init__(conn, root)
        self._mro = {}
        self._member = {}
        self._below = {}
        self._methods = {}  # method name -> the qualnames of every method of that name
        self._abstract = {}

    def mro(self, cls: str) -> list[str]:
        got = self._mro.get(cls)
        if got is not None:
            self._cuts += ("mro", cls) in self._pending
            return got
        self._mro[cls] = [cls]  # cycle guard
        self._pending.add(("mro", cls))
        out = [cls]
        d = self.definition(cls)
        if d is not None and d[3] == "class":
            fid, parent = d[0], d[7]
            for base in d[8].get("bases", []):
                v = self.eval(fid, parent, _unsubscript(base), d[4])
                if v is not None and v[0] == "def":
                    bd = self.definition(v[1])
                    if bd is not None and bd[3] == "class":
                        for b in self.mro(v[1]):
                            if b not in out:
                                out.append(b)
        self._mro[cls] = out
        self._pending.discard(("mro", cls))
        return out

    def has_unknown_base(self, cls: str) -> bool:
        d = self.definition(cls)
        if d is None:
            return True
        for base in d[8].get("bases", []):
            v = self.eval(d[0], d[7], _unsubscript(base), d[4])
            if v is None or v[0] != "def":
                if _unsubscript(base) in _NEUTRAL_BASES:
                    continue  # adds no attributes an instance would be asked for
                return True
            if self.has_unknown_base(v[1]):
                return True
        return False

    def member(self, cls: str, attr: str) -> str | None:
        key = (cls, attr)
        if key in self._member:
            return self._member[key]
        found = None
        for c in self.mro(cls):
            if self.definition(f"{c}.{attr}") is not None:
                found = f"{c}.{attr}"
                break
        self._member[key] = found
        return found

    def overridden_below(self, cls: str, attr: str, found: str) -> str | None:
        """For a receiver of abstract class ``cls``: a method of a subclass in the index that overrides ``attr``
        (which ``cls`` finds as ``found``), else None.

        An abstract class has no instances of its own: the receiver is one of its subclasses, and where one of them
        overrides the method the call may run that override instead. (A concrete class's receiver is read as that
        class, prism's static reading.)
        """
        key = (cls, attr, found)  # asked again for every call on a receiver of the same class
        if key in self._below:
            return self._below[key]
        methods = self._methods.get(attr)
        if methods is None:
            methods = self._methods[attr] = [q for (q,) in self.conn.execute(
                "SELECT qualname FROM defs WHERE name=? AND kind='method'", (attr,))]
        got = None
        for q in methods:
            owner = q.rsplit(".", 1)[0]
            if owner != cls and not same_name(q, found) and cls in self.mro(owner):
                got = q if self.is_abstract(cls) else None
                break
        self._below[key] = got
        return got

    def is_abstract(self, cls: str) -> bool:
        """Whether class ``cls`` keeps an ``@abstractmethod`` (its own or a base's) that nothing below overrides."""
        got = self._abstract.get(cls)
        if got is None:
            got = False
            for c in self.mro(cls):
                cd = self.definition(c)
                info = self.info(cd[0]) if cd is not None else None
                for q in [q for q, par in info.parents.items() if par == c] if info is not None else ():
                    d = self.definition(q)
                    if d is not None and any(x.split("(", 1)[0] in ("abstractmethod", "abc.abstractmethod")
                                             for x in d[8].get("decorators", [])) \
                            and same_name(self.member(cls, d[2]) or "", q):
                        got = True
                        break
                if got:
                    break
            self._abstract[cls] = got
        return got
