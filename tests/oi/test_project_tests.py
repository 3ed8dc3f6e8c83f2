"""`tomo.oi.project_tests`: what the project's own tests show a model that must write one (read as text, never run)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tomo.oi.project_tests import example_calling, missing_fixtures, read_tests, with_pytest_fixtures
from tomo.oi.stated import as_stated

TESTS = '''\
import pytest

from csvsum import read_column

DATA = "a,b\\n1,2\\n"
UNUSED = 3


@pytest.fixture
def rows(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text(DATA)
    return path


@pytest.fixture
def named(rows):
    return rows.name


def test_read_column(rows):
    assert read_column(rows, "a") == ["1"]


def test_long_read_column(rows):
    values = read_column(rows, "b")
    assert values
    assert values == ["2"]


def test_other():
    assert UNUSED == 3
'''


def project(tmp_path: Path) -> Path:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_csv.py").write_text(TESTS)
    (tmp_path / "tests" / "test_broken.py").write_text("def test_(:\n")
    (tmp_path / "tests" / "test_tomo_repro.py").write_text("def test_mine():\n    assert read_column(1)\n")
    return tmp_path


def test_the_shortest_test_that_calls_the_function_comes_with_its_fixture_and_constant(tmp_path: Path) -> None:
    tests = read_tests(project(tmp_path))
    assert [t.path for t in tests] == ["tests/test_csv.py"]  # unparsable and tomo's own files are left out
    example = example_calling(tests, "read_column")
    assert example.startswith('DATA = "a,b\\n1,2\\n"\n\n\n@pytest.fixture\ndef rows(tmp_path):')
    assert example.endswith('def test_read_column(rows):\n    assert read_column(rows, "a") == ["1"]')
    assert "UNUSED" not in example and "named" not in example and "test_long" not in example
    assert example_calling(tests, "write_column") == ""


def test_a_fixture_the_test_asks_for_is_copied_with_what_it_uses(tmp_path: Path) -> None:
    tests = read_tests(project(tmp_path))
    mine = ast.parse("def test_mine(named, tmp_path, capsys):\n    assert named\n")
    added = missing_fixtures(mine, tests)
    assert [a.splitlines()[0] for a in added] == ['DATA = "a,b\\n1,2\\n"', "@pytest.fixture", "@pytest.fixture"]
    assert "def rows(tmp_path)" in added[1] and "def named(rows)" in added[2]
    own = ast.parse("import pytest\n\n@pytest.fixture\ndef rows():\n    return 1\n\ndef test_mine(rows):\n    pass\n")
    assert missing_fixtures(own, tests) == []  # defined in the test itself
    assert missing_fixtures(ast.parse("def test_mine(nowhere):\n    pass\n"), tests) == []


def test_a_pytest_fixture_used_without_asking_for_it_becomes_a_parameter() -> None:
    code = ('from appconf import load\n\n\ndef test_override():\n    defaults = pytest.helpers.tmp_path / "d.ini"\n'
            '    assert load([defaults]) == {}\n\n\ndef test_patch(x):\n    monkeypatch.setenv("A", "1")\n'
            '    tmp_path = "mine"\n    assert tmp_path\n')
    fixed, added = with_pytest_fixtures(code)
    assert "def test_override(tmp_path):\n    defaults = tmp_path / \"d.ini\"" in fixed
    assert "def test_patch(monkeypatch, x):" in fixed  # its own tmp_path is a local, not the fixture
    assert sorted(added) == ["monkeypatch", "tmp_path"]
    ast.parse(fixed)
    assert with_pytest_fixtures("def test_ok(tmp_path):\n    assert tmp_path\n") == (
        "def test_ok(tmp_path):\n    assert tmp_path\n", [])
    assert with_pytest_fixtures("def test_(:\n") == ("def test_(:\n", [])  # not Python: left as it is


def test_a_fixture_called_like_a_file_maker_is_joined_instead() -> None:
    code = 'def test_load():\n    d = pytest.helpers.tmp_path("défaults.ini")\n    d.write_text("x")\n'
    fixed, added = with_pytest_fixtures(code)
    assert fixed == 'def test_load(tmp_path):\n    d = (tmp_path / "défaults.ini")\n    d.write_text("x")\n'
    assert added == ["tmp_path"]


TASK = "It shows 37.0 °C for 100 °F; it should be 37.8 °C, and 0 °F about -17.78. 0 °C is 273.15 K, 0.5 is fine"


@pytest.mark.parametrize(("line", "becomes"), [
    ("assert c(100) == pytest.approx(37.8)", "assert c(100) == pytest.approx(37.8, abs=0.05)"),
    ("assert c(0) == approx(-17.78)", "assert c(0) == approx(-17.78, abs=0.005)"),
    ("assert -17.78 == c(0)", "assert pytest.approx(-17.78, abs=0.005) == c(0)"),
    ("assert k(0) == 273.15", "assert k(0) == pytest.approx(273.15, abs=0.005)"),
    # what the task does not state, or states with fewer than three digits, or the test already bounds, stays
    ("assert c(212) == 100.0", None),
    ("assert half() == 0.5", None),
    # a tolerance tighter than the task states its number (the right 37.77... fails abs=0.01) is widened too
    ("assert c(100) == pytest.approx(37.8, abs=0.01)", "assert c(100) == pytest.approx(37.8, abs=0.05)"),
    ("assert c(100) == pytest.approx(37.8, rel=1e-3)", "assert c(100) == pytest.approx(37.8, abs=0.05)"),
    ("assert c(100) == pytest.approx(37.8, rel=1e-2)", None),
    ("assert c(100) == pytest.approx(37.8, abs=0.1)", None),
    ("assert c(100) == pytest.approx(37.8, abs=tolerance)", None),
    ("assert c(100) == 37.81", None),
    # a number the task does not state, asked for "approximately" with no tolerance: as precisely as it is written
    # (Qwen 1.5B's second test asserted approx(37.78) and put the right 37.77... back)
    ("assert c(100) == pytest.approx(37.78)", "assert c(100) == pytest.approx(37.78, abs=0.005)"),
    ("assert c(100) == pytest.approx(37.78, abs=0.001)", None),  # its own tolerance stands
    ("assert c(1) == pytest.approx(0.5)", None),  # fewer than three digits: exact enough
    ("assert c(100) != 37.8", None),
    ("assert 'é' and c(100) == 37", None),
])
def test_a_float_the_task_states_is_compared_as_precisely_as_it_is_stated(line: str, becomes: str | None) -> None:
    code = f"def test_c():\n    {line}\n"
    fixed, widened = as_stated(code, TASK)
    assert fixed == (f"def test_c():\n    {becomes}\n" if becomes else code)
    assert bool(widened) == bool(becomes)
    assert as_stated("def test_(:\n", TASK) == ("def test_(:\n", [])
