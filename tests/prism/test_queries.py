"""Symbol lookup (qualified names, suffixes, path:line:col, ambiguity, suggestions), callers, callees, impact."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from tomo.errors import PrismError
from tomo.prism import Graph

from .conftest import write_project

FILES = {
    "app/__init__.py": "",
    "app/models.py": """
        class User:
            def save(self):
                return self.validate()

            def validate(self):
                return True


        class Order:
            def save(self):
                return 1
    """,
    "app/service.py": """
        from app.models import User


        def register(name):
            u = User()
            u.save()
            return u


        def admin():
            return register("root")
    """,
    "tests/test_service.py": """
        from app.service import admin


        def test_admin():
            assert admin()
    """,
}


@pytest.fixture
def graph(tmp_path: Path):  # type: ignore[no-untyped-def]
    write_project(tmp_path, FILES)
    with Graph.open(tmp_path) as g:
        yield g


def test_symbol_by_qualname_suffix_and_location(graph: Graph) -> None:
    assert graph.symbol("app.models.User.save").line == 2
    assert graph.symbol("User.save").qualname == "app.models.User.save"
    assert graph.symbol("app/models.py:2:8").qualname == "app.models.User.save"
    assert graph.symbol("app/service.py:6:6").qualname == "app.models.User.save"  # a use resolves to its def
    assert graph.symbol("app.models").kind == "module"


def test_a_name_matching_several_symbols_lists_them(graph: Graph) -> None:
    with pytest.raises(PrismError) as err:
        graph.symbol("save")
    assert "app.models.User.save" in err.value.message and "app.models.Order.save" in err.value.message
    assert "qualified" in err.value.hint


def test_unknown_symbol_suggests_the_nearest(graph: Graph) -> None:
    with pytest.raises(PrismError) as err:
        graph.symbol("app.models.User.valdate")
    assert "app.models.User.validate" in err.value.hint


def test_find_symbol_by_substring(graph: Graph) -> None:
    assert [s.qualname for s in graph.find_symbol("regis")] == ["app.service.register"]
    assert {s.qualname for s in graph.find_symbol("save")} == {"app.models.User.save", "app.models.Order.save"}


def test_callers_and_callees(graph: Graph) -> None:
    callers = graph.callers("app.models.User.save")
    assert [(c.symbol.qualname, c.reference.line, c.reference.confidence) for c in callers] == [
        ("app.service.register", 6, "confirmed")]
    callees = graph.callees("app.service.register")
    assert [(c.name, c.symbol.qualname if c.symbol else None) for c in callees] == [
        ("User", "app.models.User"), ("save", "app.models.User.save")]


def test_impact_is_transitive_and_marks_tests(graph: Graph) -> None:
    items = graph.impact("app.models.User.validate")
    got = [(i.symbol.qualname, i.depth, i.is_test) for i in items]
    assert got == [("app.models.User.save", 1, False), ("app.service.register", 2, False),
                   ("app.service.admin", 3, False), ("tests.test_service", 4, True),
                   ("tests.test_service.test_admin", 4, True)]


def test_impact_of_a_constructor_includes_instantiations(graph: Graph) -> None:
    (graph.root / "app/models.py").write_text((graph.root / "app/models.py").read_text()
                                              + "\n\nclass Box:\n    def __init__(self):\n        self.n = 0\n")
    (graph.root / "app/box_user.py").write_text("from app.models import Box\n\n\ndef make():\n    return Box()\n")
    graph.refresh()
    assert [(i.symbol.qualname, i.via) for i in graph.impact("app.models.Box.__init__")] == [
        ("app.box_user.make", "call")]


def _add_second_caller(root: Path) -> None:
    service = root / "app/service.py"
    service.write_text(service.read_text() + "\n\ndef again():\n    User().save()\n")


def test_answers_kept_between_queries_follow_a_refresh(graph: Graph) -> None:
    for query in (graph.references, graph.callers, graph.impact):
        query("app.models.User.save")  # remembered: the next ones must not be served from before the change
    _add_second_caller(graph.root)
    graph.refresh()
    assert [(c.symbol.qualname, c.reference.line) for c in graph.callers("app.models.User.save")] == [
        ("app.service.register", 6), ("app.service.again", 15)]
    assert ("app/service.py", 15) in {(r.path, r.line) for r in graph.references("app.models.User.save")}
    assert "app.service.again" in {i.symbol.qualname for i in graph.impact("app.models.User.save")}


def test_answers_kept_between_queries_follow_another_process_refreshing_the_index(graph: Graph) -> None:
    assert len(graph.callers("app.models.User.save")) == 1
    _add_second_caller(graph.root)
    with Graph.open(graph.root) as other:  # another connection re-indexes the changed file and commits
        assert len(other.callers("app.models.User.save")) == 2
    assert [c.symbol.qualname for c in graph.callers("app.models.User.save")] == [
        "app.service.register", "app.service.again"]


def test_a_query_leaves_the_garbage_collector_as_it_found_it(graph: Graph) -> None:
    assert gc.isenabled()
    graph.impact("app.models.User.validate")
    assert gc.isenabled()
    with pytest.raises(PrismError):
        graph.references("app.models.NoSuchThing")  # an error leaves it restored too
    assert gc.isenabled()
    gc.disable()  # an application that runs without the collector keeps it off
    try:
        graph.callers("app.models.User.save")
        assert not gc.isenabled()
    finally:
        gc.enable()
