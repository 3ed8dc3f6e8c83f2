"""pytest: what a test's or a fixture's parameter gets from a fixture or a ``parametrize``.

pytest passes fixtures to tests (``test*``) and to other fixtures only, looked up in pytest's order: a fixture of the
test's own class, one at the test module's top level, then the conftest.py files from the test's directory upward,
then the plugins (modules named by ``pytest_plugins`` in those files, and pytest's own when pytest is indexed), known
only when exactly one plugin defines the name. The parameter's type is what the fixture returns (or yields). A
``parametrize`` on the test or its class that names the parameter gives it the values' type instead: the one type
they share, or their union (a method call on it is confirmed only where all agree). Ambiguous: a fixture no file
provides, two plugins that both do, values prism cannot type, a decorator too long to keep (it may be that
parametrize), fixtures requested by ``usefixtures`` or ``request.getfixturevalue``.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from tomo.prism.resolve.core import Core, Value


class Fixtures(Core):
    _fixture: dict[tuple[int, str, str | None], Value]
    _builtin_fixtures: dict[str, set[str]] | None

    def __init__(self, conn: sqlite3.Connection, root: Path | None = None) -> None:
        super().__init__(conn, root)
        self._fixture = {}
        self._builtin_fixtures = None

    def _takes_fixture(self, fid: int, scope: str, name: str) -> bool:
        """pytest passes fixtures to tests (``test*``) and to other fixtures only, and a ``parametrize`` on the test
        or its class that names the parameter gives it the parameter values instead."""
        d = self.definition(scope)
        if d is None or d[0] != fid:
            return False
        decs: list[str] = list(d[8].get("decorators", []))
        if not (d[2].startswith("test") or any(x.split("(", 1)[0].endswith("fixture") for x in decs)):
            return False
        cls = self._enclosing_class(fid, self._parent(fid, scope))
        if cls is not None:
            cd = self.definition(cls)
            decs += cd[8].get("decorators", []) if cd else []
        word = re.compile(rf"\b{re.escape(name)}\b")
        # "?" is a decorator too long to keep: it may be the parametrize that names this parameter
        return not any(x == "?" or ("parametrize" in x and word.search(x)) for x in decs)

    def fixture(self, fid: int, name: str, scope: str = "") -> Value:
        """The type a test parameter gets from the fixture of that name.

        pytest's order: a fixture of the test's own class, then one at the test module's top level, then
        conftest.py files from the test's directory upward.
        """
        cls = self._enclosing_class(fid, scope) if scope else None
        key = (fid, name, cls)
        if key in self._fixture:
            self._cuts += ("fixture", key) in self._pending
            return self._fixture[key]
        self._fixture[key] = None
        self._pending.add(("fixture", key))
        path = self.file(fid)[0]
        dirs = path.split("/")[:-1]
        candidates = [path] + ["/".join([*dirs[:k], "conftest.py"]) for k in range(len(dirs), -1, -1)]
        rows = self.conn.execute(f"SELECT id, path FROM files WHERE path IN ({','.join('?' * len(candidates))})",
                                 candidates).fetchall()
        best: tuple[int, str] | None = None
        for ffid, p in rows:
            module = self.module_name(ffid)
            for q in self.info(ffid).get("fixtures", {}).get(name, ()):
                owner = q.rsplit(".", 1)[0]
                if owner == module:
                    rank = 2 * candidates.index(p) + 1
                elif cls is not None and owner == cls and ffid == fid:
                    rank = 0
                else:
                    continue
                if best is None or rank < best[0]:
                    best = (rank, q)
        provider = best[1] if best else self._plugin_fixture([r[0] for r in rows], name)
        value = self.returns(provider, fixture=True) if provider else None
        self._fixture[key] = value
        self._pending.discard(("fixture", key))
        return value

    def _plugin_fixture(self, fids: list[int], name: str) -> str | None:
        """A fixture no test module or conftest.py defines: one a pytest plugin in the index provides.

        The plugins are the modules named by ``pytest_plugins`` in the test module and the conftest.py files above
        it, and pytest's own (``_pytest.*``, when pytest itself is indexed: its fixtures ``capsys``,
        ``monkeypatch``... are there for every test). Known only when exactly one of them defines the name.
        """
        modules: set[str] = set()
        for ffid in fids:
            d = self.definition(f"{self.module_name(ffid)}.pytest_plugins")
            for m in re.findall(r"[\"']([\w.]+)[\"']", (d[8].get("value") or "") if d and d[3] == "variable" else ""):
                modules.add(m if self.module_file(m) is not None or self.module_file(f"_pytest.{m}") is None
                            else f"_pytest.{m}")  # `pytest_plugins = "pytester"`: pytest's own plugin by name
        found = {q for m in modules if (mfid := self.module_file(m)) is not None
                 for q in self.info(mfid).get("fixtures", {}).get(name, ())}
        if not found:
            if self._builtin_fixtures is None:
                self._builtin_fixtures = {}
                for (bfid,) in self.conn.execute(
                        "SELECT id FROM files WHERE lang='python' AND (module='_pytest' OR module LIKE '\\_pytest.%'"
                        " ESCAPE '\\')"):
                    for fname, qs in self.info(bfid).get("fixtures", {}).items():
                        self._builtin_fixtures.setdefault(fname, set()).update(qs)
            found = self._builtin_fixtures.get(name, set())
        return next(iter(found)) if len(found) == 1 else None

    def _parametrized(self, fid: int, scope: str, name: str) -> Value:
        """A test parameter that ``@pytest.mark.parametrize`` gives values: known when every value is, as the one
        type they share or the union of them (a method call on it is confirmed only where all agree)."""
        d = self.definition(scope)
        if d is None or not any("parametrize" in x or x == "?" for x in d[8].get("decorators", [])):
            return None
        src = self._source(fid)
        got = src.parametrized(d[4], name) if src is not None else None
        parent = self._parent(fid, scope)
        texts: list[str] | None
        where = (fid, parent, d[4])
        if isinstance(got, str):  # the values are a list held by a name
            items = self._literal_of(fid, parent, got, d[4], 0)
            if items is None:
                return None
            where, texts = items[0], items[1]
        else:
            texts = got
        if not texts:
            return None
        types = {self.type_of(self.eval(where[0], where[1], t, where[2])) for t in texts}
        if None in types:
            return None
        return types.pop() if len(types) == 1 else ("union", tuple(sorted(types, key=repr)))
