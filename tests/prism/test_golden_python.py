"""Golden tests for every Python resolution rule: each project marks, line by line, what prism must report.

Unmarked lines must have no reference: that is how the cases prism must *not* claim are checked.
"""

from __future__ import annotations

CORE = """
class Base:
    def start(self):  # START
        return 1

class Engine(Base):
    def __init__(self, name: str):
        self.name = name

    def run(self) -> int:  # RUN
        return 2

def make() -> Engine:
    return Engine("x")

def build():
    return Engine("y")
"""


def core(defined: str) -> str:
    """CORE with the definition of ``defined`` ("start" or "run") marked, the other left plain."""
    return CORE.replace(f"# {defined.upper()}", "# refs: def").replace("# START", "").replace("# RUN", "")


def test_imports_aliases_and_reexports(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "pkg/__init__.py": """
            from .core import Engine  # refs: confirmed
            __all__ = ["Engine"]  # refs: confirmed
        """,
        "pkg/core.py": """
            class Engine:  # refs: def
                pass
        """,
        "pkg/a.py": """
            from pkg import Engine  # refs: confirmed
            from pkg.core import Engine as E  # refs: confirmed
            import pkg.core
            import pkg.core as pc

            Engine()  # refs: confirmed
            E()  # refs: confirmed
            pkg.core.Engine()  # refs: confirmed
            pc.Engine()  # refs: confirmed
        """,
        "pkg/sub/b.py": """
            from ..core import Engine  # refs: confirmed
            from .. import core

            def f():
                return core.Engine()  # refs: confirmed
        """,
        "other/c.py": """
            from elsewhere import Engine

            Engine()
        """,
    }, "pkg.core.Engine")


def test_scopes_locals_params_globals(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "m.py": """
            def helper():  # refs: def
                return 1

            def shadow_local():
                helper = lambda: 2
                return helper()

            def shadow_param(helper):
                return helper()

            def uses():
                return helper()  # refs: confirmed

            def closure():
                def inner():
                    return helper()  # refs: confirmed
                return inner

            class K:
                helper = 3

                def method(self):
                    return helper()  # refs: confirmed

            def rebinds_global():
                global helper  # refs: confirmed
                helper = None  # refs: confirmed
        """,
    }, "m.helper")


def test_local_type_inference(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "app/core.py": core("run"),
        "app/use.py": """
            from app.core import Engine, make, build


            class Holder:
                def __init__(self):
                    self.engine = Engine("h")

                def go(self):
                    return self.engine.run()  # refs: confirmed


            def f(x, y: Engine, z: "Engine", w: Engine | None):
                a = Engine("a")
                a.run()  # refs: confirmed
                y.run()  # refs: confirmed
                z.run()  # refs: confirmed
                w.run()  # refs: confirmed
                make().run()  # refs: confirmed
                b = build()
                b.run()  # refs: confirmed
                x.run()  # refs: ambiguous(untyped receiver)
                if isinstance(x, Engine):
                    x.run()  # refs: confirmed
                x.run()  # refs: ambiguous(untyped receiver)


            def g(v):
                assert isinstance(v, Engine)
                return v.run()  # refs: confirmed


            class Session:
                def __enter__(self) -> "Self":
                    return self

                def __exit__(self, *exc):
                    return None

                def engine(self) -> Engine:
                    return Engine("s")


            def h():
                with Session() as s, open("f") as fh:
                    s.engine().run()  # refs: confirmed
                    fh.run()  # refs: ambiguous(untyped receiver)
        """,
        "app/core2.py": """
            class Other:
                def run(self):
                    return 0

            def h():
                o = Other()
                return o.run()
        """,
    }, "app.core.Engine.run")


def test_definition_is_reported(golden) -> None:  # type: ignore[no-untyped-def]
    golden({"app/core.py": core("run")}, "app.core.Engine.run")


def test_refusals_getattr_patch_dynamic_import(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "app/core.py": core("run"),
        "app/dyn.py": """
            import importlib
            from unittest import mock
            from app.core import Engine


            def f(obj, name):
                getattr(obj, "run")()  # refs: ambiguous(getattr)
                hasattr(Engine, "run")  # refs: ambiguous(getattr)
                with mock.patch("app.core.Engine.run"):  # refs: ambiguous(mock.patch)
                    pass
                with mock.patch.object(Engine, "run"):  # refs: ambiguous(mock.patch)
                    pass
                with mock.patch("app.dyn.Runner.run"):  # a dotted target that names another method
                    pass
                importlib.import_module("app.run")  # refs: ambiguous(dynamic import)
                print("run")  # refs: ambiguous(string mention)
                obj.run()  # refs: ambiguous(untyped receiver)
                # a comment that says run is not a reference


            class Runner:
                def run(self):
                    return 0


            def builtins_are_not_it(*args, **kwargs):
                kwargs.run()
                args.run()
                d = {}
                d.run()
                s = "text"
                s.run()
                n: dict[str, int] = make()
                n.run()
                dict(a=1).run()
        """,
    }, "app.core.Engine.run")


def test_attributes_and_class_variables(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "app/box.py": """
            class Box:
                limit = 10  # refs: def

                def __init__(self):
                    self.size = 1

                def check(self):
                    return self.limit  # refs: confirmed


            def f(b: Box):
                return b.limit + Box.limit  # refs: confirmed, confirmed


            def g(other):
                return other.limit  # refs: ambiguous(untyped receiver)
        """,
    }, "app.box.Box.limit")


def test_star_imports_properties_and_nested_classes(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "app/__init__.py": "",
        "app/core.py": core("run"),
        "app/star.py": """
            from app.core import *


            def f():
                return Engine("s").run()  # refs: confirmed
        """,
        "app/props.py": """
            from app.core import Engine


            class Garage:
                class Slot:
                    engine: Engine

                @property
                def main(self) -> Engine:
                    return Engine("m")

                def go(self):
                    self.main.run()  # refs: confirmed
                    Garage.Slot().engine.run()  # refs: confirmed
                    self.main().run()  # refs: ambiguous(untyped receiver)
        """,
    }, "app.core.Engine.run")
