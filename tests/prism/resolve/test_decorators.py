"""Golden tests of resolve/decorators.py: what the name of a decorated function holds."""

from __future__ import annotations

from .projects import DECOY


def test_a_decorator_annotated_to_return_a_class_rebinds_the_name(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "pipe.py": """
            from typing import Callable, TypeVar, overload, Any

            F = TypeVar("F", bound=Callable[..., Any])

            class Pipeline:
                def add(self, x):  # refs: def
                    return self

            def build_pipeline(name: str = "") -> Callable[[F], Pipeline]:
                def wrap(f):
                    return Pipeline()
                return wrap

            def as_pipeline(f: Callable[..., Any]) -> Pipeline:
                return Pipeline()

            @overload
            def pipe(f: F) -> Pipeline: ...
            @overload
            def pipe(*, name: str) -> Callable[[F], Pipeline]: ...
            def pipe(f=None, *, name=""):
                return Pipeline()

            def keep(f: F) -> F:
                return f
        """,
        "use.py": """
            from pipe import build_pipeline, as_pipeline, pipe, keep
            from decoy import Decoy

            @build_pipeline()
            def etl():
                pass

            @as_pipeline
            def load():
                pass

            @pipe
            def one():
                pass

            @pipe(name="x")
            def two():
                pass

            @keep
            def kept() -> Decoy:
                return Decoy()

            def mystery(f):
                return f

            @mystery
            def unknown():
                pass

            etl.add(1)  # refs: confirmed
            load.add(2)  # refs: confirmed
            one.add(3)  # refs: confirmed
            two.add(4)  # refs: confirmed
            kept().add(5)
            unknown.add(6)  # refs: ambiguous(untyped receiver)
        """,
        "decoy.py": DECOY,
    }, "pipe.Pipeline.add")


def test_preserving_decorators_keep_the_function(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "m.py": """
            import contextlib
            import functools
            from typing import Iterator
            from decoy import Decoy

            class Engine:
                def run(self):  # refs: def
                    return 1

            def logged(f):
                @functools.wraps(f)
                def wrapper(*a, **k):
                    return f(*a, **k)
                return wrapper

            def retry(times):
                def deco(f):
                    @functools.wraps(f)
                    def inner(*a, **k):
                        return f(*a, **k)
                    return inner
                return deco

            @logged
            def make() -> Engine:
                return Engine()

            @retry(3)
            def make2() -> Engine:
                return Engine()

            @logged
            def decoy() -> Decoy:
                return Decoy()

            @functools.cache
            def cached() -> Engine:
                return Engine()

            @contextlib.contextmanager
            def running() -> Iterator[Engine]:
                yield Engine()

            class Holder:
                @property
                def engine(self) -> Engine:
                    return Engine()

                @classmethod
                def build(cls) -> Engine:
                    return Engine()

                @staticmethod
                def fresh() -> Engine:
                    return Engine()

            def f(h: Holder):
                make().run()  # refs: confirmed
                make2().run()  # refs: confirmed
                decoy().run()
                cached().run()  # refs: confirmed
                h.engine.run()  # refs: confirmed
                Holder.build().run()  # refs: confirmed
                Holder.fresh().run()  # refs: confirmed
                with running() as e:
                    e.run()  # refs: confirmed
        """,
        "decoy.py": DECOY,
    }, "m.Engine.run")


def test_typevar_bound_factories_like_click_group(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "core.py": """
            class Group:
                def command(self):  # refs: def
                    return self

            class MyGroup(Group):
                pass
        """,
        "deco.py": """
            import typing as t
            from core import Group

            F = t.TypeVar("F", bound=t.Callable[..., t.Any])
            GrpType = t.TypeVar("GrpType", bound=Group)

            @t.overload
            def group(name: F) -> Group: ...
            @t.overload
            def group(name: str | None, cls: type[GrpType], **attrs: t.Any) -> t.Callable[[F], GrpType]: ...
            @t.overload
            def group(name: None = None, *, cls: type[GrpType], **attrs: t.Any) -> t.Callable[[F], GrpType]: ...
            @t.overload
            def group(name: str | None = ..., cls: None = None, **attrs: t.Any) -> t.Callable[[F], Group]: ...
            def group(name=None, cls=None, **attrs):
                return Group()
        """,
        "cli.py": """
            import deco
            from core import MyGroup
            from decoy import Decoy

            @deco.group
            def plain():
                pass

            @deco.group(chain=True)
            def chained():
                pass

            @deco.group("name")
            def named():
                pass

            @deco.group(cls=MyGroup)
            def custom():
                pass

            @deco.group("x", MyGroup)
            def custom2():
                pass

            @deco.group(cls=Decoy)
            def decoyed():
                pass

            plain.command()  # refs: confirmed
            chained.command()  # refs: confirmed
            named.command()  # refs: confirmed
            custom.command()  # refs: confirmed
            custom2.command()  # refs: ambiguous(untyped receiver)
            decoyed.command()
            Decoy().step()
        """,
        "decoy.py": DECOY + """
    def command(self):
        return self
""",
    }, "core.Group.command")


def test_method_decorator_factories_and_unknown_inner_decorators(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "core.py": """
            import typing as t

            F = t.TypeVar("F", bound=t.Callable[..., t.Any])
            GrpType = t.TypeVar("GrpType", bound="Group")

            class Group:
                def command(self):  # refs: def
                    return self

                @t.overload
                def group(self, name: F) -> "Group": ...
                @t.overload
                def group(self, name: str | None = None,
                          cls: type[GrpType] | None = None) -> t.Callable[[F], GrpType]: ...
                def group(self, name=None, cls=None):
                    return Group()

            def group() -> t.Callable[[F], Group]:
                return lambda f: Group()
        """,
        "cli.py": """
            import core
            from decoy import Decoy

            def mystery(f):
                return f

            @core.group()
            def cli():
                pass

            @cli.group()
            def sub():
                pass

            @cli.group("x", Decoy)
            def other():
                pass

            @core.group()
            @mystery
            def wrapped():
                pass

            sub.command()  # refs: confirmed
            wrapped.command()  # refs: confirmed
            other.command()  # refs: ambiguous(untyped receiver)
        """,
        "decoy.py": DECOY,
    }, "core.Group.command")


def test_a_decorated_function_does_not_give_its_return_type(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "m.py": """
            import functools

            class Engine:
                def run(self):  # refs: def
                    return 1

            def deco(f):
                return lambda: 42

            @deco
            def wrapped() -> Engine:
                return Engine()

            @functools.lru_cache(maxsize=None)
            def cached() -> Engine:
                return Engine()

            @staticmethod
            def plain() -> Engine:
                return Engine()

            def f():
                wrapped().run()  # refs: ambiguous(untyped receiver)
                cached().run()  # refs: confirmed
                plain().run()  # refs: confirmed
        """,
    }, "m.Engine.run")
