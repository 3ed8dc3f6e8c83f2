"""Golden tests of resolve/classes.py: inheritance, bases outside the index, abstract receivers."""

from __future__ import annotations

from .projects import DECOY, core


def test_abstract_receivers_whose_subclass_overrides_are_ambiguous(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "app.py": """
            from abc import ABC, abstractmethod

            class Parameter(ABC):
                @abstractmethod
                def kind(self): ...

                def get_default(self):  # refs: def
                    return 1

            class Option(Parameter):
                def kind(self):
                    return "option"

                def get_default(self):  # refs: ambiguous(overrides)
                    return 2

            class Argument(Parameter):
                def kind(self):
                    return "argument"

            class Command:
                def get_default(self):
                    return 3

            def f(p: Parameter, params: list[Parameter], a: Argument):
                p.get_default()  # refs: ambiguous(which overrides it)
                for q in params:
                    q.get_default()  # refs: ambiguous(which overrides it)
                a.get_default()  # refs: confirmed
                Argument().get_default()  # refs: confirmed
        """,
    }, "app.Parameter.get_default")


def test_self_calls_with_bases_outside_the_index(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "v.py": """
            import abc
            import typing
            from typing import Generic, TypeVar
            from somelib import Plugin
            from decoy import Decoy

            T = TypeVar("T")

            class Validator(Generic[T]):
                def reject(self, x):  # refs: def
                    return x

            class Ranged(Validator[T], typing.Generic[T]):
                def check(self, x):
                    return self.reject(x)  # refs: confirmed

            class Abstract(abc.ABC, Validator[int]):
                def check(self, x):
                    return self.reject(x)  # refs: confirmed

            class Lib(Plugin, Validator[str]):
                def check(self, x):
                    return self.reject(x)  # refs: confirmed

            class Other(Decoy, typing.Generic[T]):
                def check(self, x):
                    return self.reject(x)
        """,
        "decoy.py": DECOY,
    }, "v.Validator.reject")


def test_inheritance_self_super_cls(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "app/core.py": core("start"),
        "app/use.py": """
            from app.core import Base, Engine


            class Turbo(Engine):
                def start(self):  # refs: ambiguous(overrides)
                    return super().start() + 1  # refs: confirmed

                def go(self):
                    return self.start()  # refs: ambiguous(bound to app.use.Turbo.start)


            class Plain(Engine):
                def go(self):
                    return self.start()  # refs: confirmed

                @classmethod
                def make(cls):
                    return cls.start  # refs: confirmed


            class Ctx(Engine):
                def __enter__(self) -> "Self":
                    return self

                def __exit__(self, *exc):
                    return None


            class FastCtx(Ctx):
                def start(self):  # refs: ambiguous(overrides)
                    return 3


            def ctx_use():
                with Ctx() as c:
                    c.start()  # refs: confirmed
                with FastCtx() as fc:
                    fc.start()  # refs: ambiguous(overrides)


            def f(e: Engine, t: Turbo, b: Base):
                e.start()  # refs: confirmed
                t.start()  # refs: ambiguous(Turbo.start overrides app.core.Base.start)
                b.start()  # refs: confirmed
                Engine.start(e)  # refs: confirmed
        """,
    }, "app.core.Base.start")


def test_a_subclass_attribute_of_the_same_name_is_offered_with_it(golden) -> None:  # type: ignore[no-untyped-def]
    # B sets self.size and A's methods read it: renaming A.size alone would make grow() ignore B's value
    golden({
        "m.py": """
            class A:
                size = 0  # refs: def

                def grow(self):
                    return self.size + 1  # refs: confirmed

            class B(A):
                def __init__(self):
                    self.size = 3  # refs: ambiguous(overrides)

            class C(A):
                size = 7  # refs: ambiguous(overrides)

            class Unrelated:
                size = 1

            size = 2

            def f(b: B, u: Unrelated):
                return b.size + u.size  # refs: ambiguous(bound to m.B.size)
        """,
    }, "m.A.size")
