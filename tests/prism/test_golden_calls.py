"""Golden tests for the call sites that runtime truth showed prism leaving unconfirmed (issue 16, second round):
submodules a package imports into itself, the class reached through ``self.__class__``, fixtures that pytest
plugins provide. Each project has a same-named decoy (``Decoy``) whose uses must never be confirmed, and a case
where the mechanism must not apply.
"""

from __future__ import annotations

DECOY = """
class Decoy:
    def deserialize(self, x):
        return x

    def run(self):
        return 1

    def readouterr(self):
        return 0
"""


def test_a_submodule_the_package_imports_into_itself(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "pkg/__init__.py": """
            from . import fields
            from . import other
        """,
        "pkg/fields.py": """
            class Field:
                def deserialize(self, x):  # refs: def
                    return x
        """,
        "pkg/other.py": """
            class Field:
                def deserialize(self, x):
                    return x
        """,
        "rebound/__init__.py": """
            from . import fields
            fields = make_fields()
        """,
        "rebound/fields.py": """
            class Field:
                def deserialize(self, x):
                    return x
        """,
        "use.py": """
            from pkg import fields, other
            import pkg
            from rebound import fields as rfields

            fields.Field().deserialize(1)  # refs: confirmed
            pkg.fields.Field().deserialize(2)  # refs: confirmed
            other.Field().deserialize(3)
            rfields.Field().deserialize(4)  # refs: ambiguous(untyped receiver)
        """,
    }, "pkg.fields.Field.deserialize")


def test_the_class_of_self_and_functions_kept_as_static_methods(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "cap.py": """
            from decoy import Decoy

            class MultiCapture:
                def readouterr(self):  # refs: def
                    return ""

            def std_capture() -> MultiCapture:
                return MultiCapture()

            def decoy_capture() -> Decoy:
                return Decoy()

            class TestStd:
                captureclass = staticmethod(std_capture)
                decoyclass = staticmethod(decoy_capture)
                unknownclass = staticmethod(lambda: None)

                def test_read(self):
                    cap = self.__class__.captureclass()
                    cap.readouterr()  # refs: confirmed
                    self.__class__.decoyclass().readouterr()
                    self.captureclass().readouterr()  # refs: confirmed
                    self.__class__.unknownclass().readouterr()  # refs: ambiguous(untyped receiver)
        """,
        "decoy.py": DECOY,
    }, "cap.MultiCapture.readouterr")


def test_fixtures_provided_by_pytest_plugins(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "app.py": """
            class Engine:
                def run(self):  # refs: def
                    return 1
        """,
        "decoy.py": DECOY,
        "_pytest/__init__.py": "",
        "_pytest/capture.py": """
            from app import Engine
            from decoy import Decoy
            import pytest

            @pytest.fixture
            def capsys():
                return Engine()

            @pytest.fixture
            def twice():
                return Engine()
        """,
        "_pytest/other.py": """
            import pytest
            from decoy import Decoy

            @pytest.fixture
            def twice():
                return Decoy()
        """,
        "myplugin.py": """
            import pytest
            from app import Engine

            @pytest.fixture
            def engine():
                return Engine()
        """,
        "unlisted.py": """
            import pytest
            from app import Engine

            @pytest.fixture
            def hidden():
                return Engine()
        """,
        "tests/conftest.py": """
            pytest_plugins = ["myplugin"]
        """,
        "tests/test_a.py": """
            def test_it(engine, capsys, twice, hidden):
                engine.run()  # refs: confirmed
                capsys.run()  # refs: confirmed
                twice.run()  # refs: ambiguous(untyped receiver)
                hidden.run()  # refs: ambiguous(untyped receiver)
        """,
    }, "app.Engine.run")
