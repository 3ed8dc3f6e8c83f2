"""Golden tests from an adversarial review: bindings prism used to confirm although they are not provably the symbol.

Each project is one a rename with confirmed edits only used to break (or silently change behaviour of).
"""

from __future__ import annotations

from tests.prism.conftest import write_project

from tomo.prism import Graph


def test_function_sees_the_last_module_binding_not_the_one_above_it(golden) -> None:  # type: ignore[no-untyped-def]
    # use_later() runs after the module is loaded, when `helper` is the second def. Both defs bind one name in one
    # namespace, so a rename takes them together; a name bound to different things (a try/except import and a
    # def) stays unproven from a function.
    golden({
        "m.py": """
            def helper(x):  # refs: def
                return x

            helper(0)  # refs: confirmed

            def use_later():
                return helper(1)  # refs: confirmed

            def helper(x):  # refs: def
                return x * 2

            try:
                from json import dumps as helper2
            except ImportError:
                def helper2(x):
                    return x

            def other():
                return helper2(1)
        """,
    }, "m.helper")


def test_a_module_name_rebound_by_assignment_is_one_variable(golden) -> None:  # type: ignore[no-untyped-def]
    # `helper = print` rebinds the same module-level name: a rename renames every binding and use of it together
    golden({
        "m.py": """
            def helper(x):  # refs: def
                return x

            def use_later():
                return helper(1)  # refs: confirmed

            helper = print  # refs: confirmed
        """,
    }, "m.helper")


def test_a_property_setter_is_renamed_with_its_getter(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "m.py": """
            class Foo:
                @property
                def size(self):  # refs: def
                    return 1

                @size.setter  # refs: confirmed
                def size(self, v):  # refs: def
                    pass

            def f(x: Foo):
                x.size = 3  # refs: confirmed
        """,
    }, "m.Foo.size")


def test_lambda_parameters_are_local_to_the_lambda(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "m.py": """
            class Engine:
                def run(self):
                    return 1

            engine = Engine()

            def helper(x):  # refs: def
                return x

            go = lambda engine: engine.helper()  # refs: ambiguous(untyped receiver)

            apply = lambda helper: helper(1)
            apply2 = lambda a, *helper, **kw: helper
            call = lambda v: helper(v)  # refs: confirmed
        """,
    }, "m.helper")


def test_a_redefined_symbol_is_found_by_its_qualified_name(tmp_path) -> None:  # type: ignore[no-untyped-def]
    write_project(tmp_path, {"m.py": "def helper():\n    return 1\n\n\ndef helper():\n    return 2\n"})
    with Graph.open(tmp_path) as g:
        sym = g.symbol("m.helper@1")
        assert (sym.qualname, sym.line) == ("m.helper@1", 5)


SHADOWING = """
try:
    from json import dumps
except ImportError:
    def dumps(x):
        return x


def helper(x):
    return x


def f(y):
    print(dumps(y))
    return helper(y)


def g(data):
    return helper(data)
"""


def test_rename_reports_names_that_would_shadow_or_be_shadowed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    write_project(tmp_path, {"m.py": SHADOWING})
    with Graph.open(tmp_path) as g:
        # a parameter without a type is still a binding: `helper(data)` would become `data(data)`
        assert [(c.line, c.col) for c in g.rename_plan("m.helper", "data").conflicts] == [(18, 11)]
        # a name bound twice (try/except import) is a collision even though its value is not known
        assert [c.line for c in g.rename_plan("m.helper", "dumps").conflicts] == [4, 14, 18]
        # naming it `print` would hide the builtin that f() calls
        got = g.rename_plan("m.helper", "print").conflicts
        assert len(got) == 1 and "builtin" in got[0].reason
        assert g.rename_plan("m.helper", "helper2").conflicts == ()


def test_a_variable_assigned_in_branches_is_confirmed_only_where_all_assignments_agree(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "m.py": """
            class Foo:
                def run(self):  # refs: def
                    return 1

                def stop(self):
                    return 0

            class Bar:
                def run(self):
                    return 2

            class SubFoo(Foo):
                pass

            class Conn:
                def __init__(self):
                    self.engine = Foo()
                    self.spare = None

                def swap(self):
                    self.engine = Bar()
                    self.spare = Foo()

                def go(self):
                    self.spare.run()  # refs: confirmed
                    return self.engine.run()  # refs: ambiguous(untyped receiver)

            def f(cond):
                if cond:
                    x = Foo()
                else:
                    x = Bar()
                return x.run()  # refs: ambiguous(different types)

            def g(cond):
                y = Foo()
                if cond:
                    y = SubFoo()
                return y.run()  # refs: confirmed

            def h(items):
                z = Foo()
                for item in items:
                    z.run()  # refs: ambiguous(different types)
                    z = Bar()
        """,
    }, "m.Foo.run")


def test_path_line_col_names_the_definition_under_the_column(tmp_path) -> None:  # type: ignore[no-untyped-def]
    write_project(tmp_path, {
        "a.js": "export function helper(x) { return x; }\n",
        "m.py": "def other():\n    return 1\n\n\n\n\n\n\ndef process_everything(x=other):\n    return x\n",
    })
    with Graph.open(tmp_path) as g:
        assert g.symbol("a.js:1:16").qualname == "a.helper"  # other languages: only the definition has a column
        # a use on a definition's line names what it uses, not the definition
        assert g.symbol("m.py:9:25").qualname == "m.other"
        assert g.symbol("m.py:9:4").qualname == "m.process_everything"


def test_star_imports_bind_only_what_the_module_exports(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "app/__init__.py": "",
        "app/a.py": """
            __all__ = ["other"]

            def helper():  # refs: def
                return 1

            def other():
                return 2

            def _hidden():
                return 3
        """,
        "app/b.py": """
            def helper():
                return 4
        """,
        "app/c.py": """
            def _hidden():
                return 5
        """,
        "app/use_one.py": """
            from app.a import *
            from app.b import *

            helper()
        """,
        "app/use_two.py": """
            from app.b import *
            from app.a import *

            helper()
        """,
        "app/use_three.py": """
            from app import a
            from app.a import helper  # refs: confirmed

            helper()  # refs: confirmed
        """,
    }, "app.a.helper")


def test_two_star_imports_that_disagree_leave_the_name_unproven(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "app/__init__.py": "",
        "app/a.py": """
            def helper():  # refs: def
                return 1
        """,
        "app/b.py": """
            def helper():
                return 4
        """,
        "app/use.py": """
            from app.a import *
            from app.b import *

            def f():
                return helper()  # refs: ambiguous(not bound)
        """,
    }, "app.a.helper")


def test_a_computed_all_does_not_hide_a_star_imported_name(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "app/__init__.py": "",
        "app/base.py": """
            __all__ = ["Model"]  # refs: confirmed

            class Model:  # refs: def
                pass
        """,
        "app/models.py": """
            from app.base import *
            from app.base import __all__ as base_all

            __all__ = base_all + ["Field"]
            __all__ += ["Other"]
        """,
        "app/use.py": """
            from app.models import *

            class Mine(Model):  # refs: confirmed
                pass
        """,
    }, "app.base.Model")


def test_nonlocal_names_belong_to_the_enclosing_function(golden) -> None:  # type: ignore[no-untyped-def]
    # renaming these with the module function left `nonlocal new_name` without a binding: a SyntaxError
    golden({
        "m.py": """
            def helper():  # refs: def
                return 1

            def outer():
                helper = None

                def inner():
                    nonlocal helper
                    helper = 2
                    return helper

                def reader():
                    nonlocal helper
                    return helper

                inner()
                return helper

            def g():
                global helper  # refs: confirmed
                return helper()  # refs: confirmed
        """,
    }, "m.helper")


def test_match_capture_patterns_bind_the_name(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "m.py": """
            import enum

            class Color(enum.Enum):
                RED = 1

            class Point:
                def __init__(self, x):
                    self.x = x

            def helper():  # refs: def
                return 1

            def f(v):
                match v:
                    case Point(x=helper):
                        return helper
                    case [*helper]:
                        return helper
                    case helper:
                        return helper

            def g(v):
                match v:
                    case Color.RED:
                        return helper()  # refs: confirmed
                    case Point(x=0):
                        return 0
        """,
    }, "m.helper")


def test_rename_to_a_name_a_subclass_already_has_is_a_conflict(tmp_path) -> None:  # type: ignore[no-untyped-def]
    write_project(tmp_path, {"m.py": "class A:\n    def run(self):\n        return 1\n\n    def go(self):\n"
                                     "        return self.run()\n\n\nclass Sub(A):\n    def stop(self):\n"
                                     "        return 2\n\n\nclass Other:\n    def halt(self):\n        return 3\n"})
    with Graph.open(tmp_path) as g:
        got = g.rename_plan("m.A.run", "stop").conflicts
        assert [(c.path, c.line) for c in got] == [("m.py", 10)] and "m.Sub" in got[0].reason
        assert g.rename_plan("m.A.run", "halt").conflicts == ()  # an unrelated class's method is no collision


def test_keyword_arguments_name_the_fields_of_the_class_called(golden) -> None:  # type: ignore[no-untyped-def]
    # `Line(qty=2)` left behind made the confirmed-only rename of a dataclass field a TypeError
    golden({
        "m.py": """
            from dataclasses import dataclass

            @dataclass
            class Line:
                qty: int  # refs: def
                price: int = 0

            @dataclass(frozen=True)
            class Bulk(Line):
                pass

            class Plain:
                qty = 0

            class Custom(Line):
                def __init__(self, qty):
                    super().__init__(qty * 2)

            def dictish(**kw):
                return kw

            def make(cls):
                Line(qty=2, price=3)  # refs: confirmed
                Bulk(qty=4)  # refs: confirmed
                Custom(qty=1)  # refs: ambiguous(keyword argument)
                Plain(qty=1)
                dictish(qty=5)
                cls(qty=6)
                return Line(1).qty  # refs: confirmed
        """,
    }, "m.Line.qty")
