"""Python binding resolution over the stored facts, at query time: a small core and one module per rule family.

:class:`Resolver` is the core (core.py: stored facts, cycle guards, the evaluation of names and expressions) with
every rule family mixed in. A family is a class in its own module that subclasses :class:`Core`, adds its methods
and declares its memos as annotated attributes; registering it is naming it once, among :class:`Resolver`'s bases
(its memos become slots by themselves). Where core asks a question a family answers, core names the method as a
hook (a stub at the end of core.py that says which module holds it). tests/prism/resolve/test_registry.py checks
that every family is registered and every hook answered by exactly one. What each family proves, and what it leaves
ambiguous, is in docs/prism.md ("Resolution rules").
"""

from __future__ import annotations

from typing import TypeVar

from tomo.prism.resolve.classes import Classes
from tomo.prism.resolve.core import Core, FileInfo, Value
from tomo.prism.resolve.decorators import Decorators
from tomo.prism.resolve.fixtures import Fixtures
from tomo.prism.resolve.params import Params
from tomo.prism.resolve.shapes import Shapes
from tomo.prism.resolve.text import same_name

__all__ = ["Core", "FileInfo", "Resolver", "Value", "same_name"]

_C = TypeVar("_C", bound=type)


def _state(*families: type) -> tuple[str, ...]:
    """The attributes the families annotate in their class bodies: their memos, all kept in the resolver's slots."""
    return tuple(sorted({name for family in families for name in vars(family).get("__annotations__", {})}))


def _slotted(cls: _C) -> _C:
    """``cls`` built again with its families' memos as slots, so that registering a family is naming it among the
    bases and nothing else: a second list of the families to gather the slots from is one to forget.

    Attributes in slots, so adding one costs nothing: without them CPython 3.11 keeps an instance's attributes in
    keys its class's instances share only up to 29 (it had 29), and past that every ``self.x`` of a query's hot loops
    becomes a dict lookup (a 30th attribute: +3.4 % instructions for Model.save's references)."""
    body = {k: v for k, v in vars(cls).items() if k not in ("__dict__", "__weakref__")}
    body["__slots__"] = _state(*cls.__mro__)
    return type(cls)(cls.__name__, cls.__bases__, body)


@_slotted
class Resolver(Shapes, Params, Fixtures, Decorators, Classes, Core):
    """The resolver one query uses (memos for that query only): the core with every rule family. The order of the
    bases is the families' registration; no two of them define the same method, so it decides nothing else."""
