"""The rule families' registry: adding a family is one module and one registration (naming it among Resolver's bases).

Nothing else must be written down twice for it to work, so these tests check what a forgotten or doubled entry would
break: a family module nobody registered, a hook core asks that no family (or two) answers, two families defining one
method (then the order of the bases would silently decide), a memo left out of the slots.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import sqlite3
from pathlib import Path

import tomo.prism.resolve as resolve
from tomo.prism.resolve import Core, Resolver, _slotted
from tomo.prism.resolve.core import Value

FAMILIES = [b for b in Resolver.__bases__ if b is not Core]


def _family_classes() -> list[type]:
    """Every subclass of Core that a module of the resolve package defines."""
    found = []
    for info in pkgutil.iter_modules(resolve.__path__):
        module = importlib.import_module(f"{resolve.__name__}.{info.name}")
        found += [c for _, c in inspect.getmembers(module, inspect.isclass)
                  if issubclass(c, Core) and c is not Core and c.__module__ == module.__name__]
    return found


def _hooks() -> set[str]:
    """Core's methods whose body only raises NotImplementedError: the questions a family answers."""
    tree = ast.parse(Path(inspect.getfile(Core)).read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Core")
    return {f.name for f in cls.body if isinstance(f, ast.FunctionDef) and len(f.body) == 1
            and isinstance(f.body[0], ast.Raise) and ast.unparse(f.body[0].exc or f.body[0]) == "NotImplementedError"}


def test_every_family_in_the_package_is_registered_once() -> None:
    assert sorted(c.__name__ for c in _family_classes()) == sorted(c.__name__ for c in FAMILIES)
    assert Resolver.__bases__[-1] is Core and len(set(Resolver.__bases__)) == len(Resolver.__bases__)


def test_every_hook_is_answered_by_exactly_one_family() -> None:
    hooks = _hooks()
    assert {"mro", "member", "decorated", "_param", "_source_bound"} <= hooks  # the scan sees the stubs
    for hook in sorted(hooks):
        owners = [f.__name__ for f in FAMILIES if hook in vars(f)]
        assert len(owners) == 1, f"core's hook {hook} is answered by {owners or 'no family'}"


def test_no_two_families_define_one_method() -> None:
    seen: dict[str, str] = {}
    for family in FAMILIES:
        for name, value in vars(family).items():
            if callable(value) and name != "__init__":
                assert name not in seen, f"{name} is defined by both {seen[name]} and {family.__name__}"
                seen[name] = family.__name__


def test_every_memo_is_a_slot() -> None:
    declared = {name for c in Resolver.__mro__ for name in vars(c).get("__annotations__", {})}
    assert declared == set(Resolver.__slots__)
    for family in FAMILIES:
        assert "__slots__" not in vars(family)  # one family's slots would clash with another's layout


class Guesses(Core):
    """A family as a new module would write it: its memo annotated, its __init__ starting it."""

    _guessed: dict[str, Value]

    def __init__(self, conn: sqlite3.Connection, root: Path | None = None) -> None:
        super().__init__(conn, root)
        self._guessed = {}


def test_registering_a_family_is_naming_it_among_the_bases() -> None:
    @_slotted
    class Extended(Guesses, *Resolver.__bases__):  # type: ignore[misc]
        pass

    assert "_guessed" in Extended.__slots__ and set(Resolver.__slots__) < set(Extended.__slots__)
    got = Extended(sqlite3.connect(":memory:"))
    assert got._guessed == {} and got.memo == {}
