"""Golden tests of resolve/fixtures.py: fixtures and parametrize give test parameters their types."""

from __future__ import annotations

from .projects import CALL_DECOY, DECOY, core


def test_fixtures_provided_by_pytest_plugins(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "app.py": """
            class Engine:
                def run(self):  # refs: def
                    return 1
        """,
        "decoy.py": CALL_DECOY,
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


def test_parametrized_test_parameters_take_the_values_types(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "app.py": """
            class Schema:
                def run(self):  # refs: def
                    return 1

            class UserSchema(Schema):
                pass

            class MetaSchema(Schema):
                pass

            class Special(Schema):
                def run(self):  # refs: ambiguous(overrides)
                    return 2
        """,
        "decoy.py": CALL_DECOY,
        "tests/base.py": """
            import functools
            from app import UserSchema, MetaSchema

            ALL = [
                UserSchema,
                MetaSchema,
                functools.partial(UserSchema, strict=True),
            ]
        """,
        "tests/test_a.py": """
            import pytest
            from app import UserSchema, MetaSchema, Special
            from decoy import Decoy
            from tests.base import ALL

            @pytest.mark.parametrize("cls", [UserSchema, MetaSchema])
            def test_classes(cls):
                cls().run()  # refs: confirmed

            @pytest.mark.parametrize(
                ("name", "schema"),
                [
                    ("a", UserSchema()),
                    pytest.param("b", MetaSchema(), id="meta"),
                ],
            )
            def test_rows(name, schema):
                schema.run()  # refs: confirmed

            @pytest.mark.parametrize("cls", ALL)
            def test_held(cls):
                cls().run()  # refs: confirmed

            @pytest.mark.parametrize("obj", [UserSchema(), Decoy()])
            def test_mixed(obj):
                obj.run()  # refs: ambiguous(different types)

            @pytest.mark.parametrize("obj", [UserSchema(), Special()])
            def test_override(obj):
                obj.run()  # refs: ambiguous(different types)

            @pytest.mark.parametrize("obj", [UserSchema()], indirect=True)
            def test_indirect(obj):
                obj.run()  # refs: ambiguous(untyped receiver)
        """,
    }, "app.Schema.run")


def test_fixtures_under_a_multiline_parametrize(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "app.py": """
            class Engine:
                def run(self):  # refs: def
                    return 1
        """,
        "decoy.py": DECOY,
        "tests/conftest.py": """
            import pytest
            from app import Engine
            from decoy import Decoy

            @pytest.fixture
            def engine():
                return Engine()

            @pytest.fixture
            def other():
                return Decoy()
        """,
        "tests/test_a.py": """
            import pytest

            @pytest.mark.parametrize("x", [1])
            def test_short(engine, other, x):
                engine.run()  # refs: confirmed
                other.run()

            @pytest.mark.parametrize(
                ("x", "y"),
                [
                    ("a long first parameter value", "another long second parameter value"),
                    ("a long first parameter value", "another long second parameter value"),
                    ("a long first parameter value", "another long second parameter value"),
                ],
            )
            def test_long(engine, other, x, y):
                engine.run()  # refs: confirmed
                other.run()

            @pytest.mark.parametrize(
                "engine",
                [
                    "a long first parameter value that is not an engine at all, as the test says",
                    "another long second parameter value that is not an engine either",
                ],
            )
            def test_long_named(engine):
                engine.run()  # refs: ambiguous(untyped receiver)
        """,
    }, "app.Engine.run")


def test_pytest_fixtures_give_parameters_their_type(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "src/app/__init__.py": "",
        "src/app/core.py": core("run"),
        "tests/conftest.py": """
            import pytest
            from app.core import Engine


            @pytest.fixture
            def engine():
                e = Engine("t")
                return e


            @pytest.fixture()
            def typed() -> Engine:
                return object()


            @pytest.fixture
            def gen():
                yield Engine("g")
        """,
        "tests/unit/test_run.py": """
            import pytest
            from app.core import Engine


            def test_inferred(engine):
                assert engine.run() == 2  # refs: confirmed


            def test_annotated(typed, gen):
                typed.run()  # refs: confirmed
                gen.run()  # refs: confirmed


            def test_unknown(other):
                other.run()  # refs: ambiguous(untyped receiver)


            @pytest.fixture(name="renamed")
            def _renamed_fixture():
                return Engine(
                    "a call long enough to span lines, which prism still types by its callee",
                    "padding padding padding padding padding padding padding padding padding padding",
                )


            def test_fixture_named_by_keyword(renamed):
                renamed.run()  # refs: confirmed


            class TestGroup:
                def test_in_class(self, engine):
                    engine.run()  # refs: confirmed


            class TestClassFixture:
                @pytest.fixture
                def engine(self):
                    return "only inside this class"

                def test_uses_class_fixture(self, engine):
                    engine.run()  # refs: ambiguous(untyped receiver)


            def test_module_level_still_uses_conftest(engine):
                engine.run()  # refs: confirmed
        """,
        "tests/unit/test_override.py": """
            import pytest


            @pytest.fixture
            def engine():
                return "not an engine"


            def test_local_fixture_wins(engine):
                engine.run()  # refs: ambiguous(untyped receiver)
        """,
    }, "app.core.Engine.run")


def test_fixture_types_reach_tests_and_fixtures_only(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "app.py": """
            class Engine:
                def run(self):  # refs: def
                    return 1

            class Other:
                def run(self):
                    return 2
        """,
        "tests/conftest.py": """
            import pytest
            from app import Engine

            @pytest.fixture
            def engine():
                return Engine()

            @pytest.fixture
            def started(engine):
                engine.run()  # refs: confirmed
                return engine
        """,
        "tests/test_a.py": """
            import pytest
            from app import Other

            def test_fixture(engine):
                engine.run()  # refs: confirmed

            @pytest.mark.parametrize("engine", [Other()])
            def test_parametrized(engine):
                engine.run()  # the parametrize gives an Other, not the fixture: provably Other.run

            @pytest.mark.parametrize("x", [1])
            class TestK:
                @pytest.mark.parametrize("engine", [Other()])
                def test_m(self, x, engine):
                    engine.run()  # an Other too

            def not_a_test(engine):  # pytest injects nothing here: its one call passes an Other
                engine.run()

            def test_calls_helper():
                not_a_test(Other())

            def shared(engine):  # every call passes the fixture
                engine.run()  # refs: confirmed

            def test_shared(engine):
                shared(engine)

            def test_shared_kw(engine):
                shared(engine=engine)
        """,
    }, "app.Engine.run")
