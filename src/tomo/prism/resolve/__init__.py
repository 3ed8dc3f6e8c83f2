"""Python binding resolution over the stored facts, at query time: a small core and one module per rule family.

:class:`Resolver` is the core (core.py: stored facts, cycle guards, the evaluation of names and expressions) with
every rule family mixed in. A family is a class in its own module that subclasses :class:`Core`, adds its methods
and declares its memos as annotated attributes; registering it is naming it below. What each family proves, and what
it leaves ambiguous, is in docs/prism.md ("Resolution rules").
"""

from __future__ import annotations

from tomo.prism.resolve.classes import Classes
from tomo.prism.resolve.core import Core, FileInfo, Value
from tomo.prism.resolve.decorators import Decorators
from tomo.prism.resolve.fixtures import Fixtures
from tomo.prism.resolve.params import Params
from tomo.prism.resolve.text import same_name

__all__ = ["Core", "FileInfo", "Resolver", "Value", "same_name"]


def _state(*families: type) -> tuple[str, ...]:
    """The attributes the families annotate in their class bodies: their memos, all kept in the resolver's slots."""
    return tuple(sorted({name for family in families for name in vars(family).get("__annotations__", {})}))


class Resolver(Params, Fixtures, Decorators, Classes, Core):
    # Attributes in slots, so adding one costs nothing: without them CPython 3.11 keeps an instance's attributes in
    # keys its class's instances share only up to 29 (it had 29), and past that every `self.x` of a query's hot
    # loops becomes a dict lookup (a 30th attribute: +3.4 % instructions for Model.save's references)
    __slots__ = _state(Params, Fixtures, Decorators, Classes, Core)
