"""A model's test that passes None where the project's own tests pass a fixture (`tomo.oi.project_tests`), and a
trial turn on the lab's `fix-route-same-stop` that reproduces the crash once tomo passes the fixture, in the real
sandbox, judged at the end by the task's hidden tests.

Every reproduction Qwen 1.5B wrote for that task in the three lab runs before the rule (9 of 9) called
`fare(None, ...)`: it could not build a `Network`, and the project's test beside it passed its fixture `net`.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

import tomo
from oi.oi_support import hidden_tests
from oi.test_honest_outcomes import TemperedScript
from oi.test_trials import block, engine_for
from tomo.events import ListSink, Notice, ReproductionKept
from tomo.oi.project_tests import fixtures_for_none, missing_fixtures, read_tests
from tomo.oi.trials import trial_turn

TASK_DIR = Path(tomo.__file__).parent / "lab" / "suites" / "small" / "fix-route-same-stop"
TASK = """The ticket machine crashes when someone taps in and out at the same station:

Traceback (most recent call last):
  File "kiosk/main.py", line 88, in on_tap_out
    price = fare(network, trip.entry, trip.exit)
  File "transit/fares.py", line 18, in fare
    zones = {network.zone(stop) for stop in route}
TypeError: 'NoneType' object is not iterable

A trip that starts and ends at the same stop should just cost the base fare."""
MODEL_TEST = '''\
from transit.fares import fare


def test_the_problem():
    assert fare(None, "Central", "Central") == Decimal("2.40")
'''
SECOND = '''\
from transit.routes import shortest_route


def test_same_stop_route():
    assert shortest_route(None, "Market", "Market") == ["Market"]
'''


@pytest.fixture
def transit(tmp_path: Path) -> Path:
    root = tmp_path / "transit"
    shutil.copytree(TASK_DIR / "repo", root)
    return root


def test_a_none_where_the_project_s_tests_pass_a_fixture_becomes_that_fixture(transit: Path) -> None:
    tests = read_tests(transit)
    code, said = fixtures_for_none(MODEL_TEST, tests, TASK)
    assert 'def test_the_problem(net):\n    assert fare(net, "Central", "Central")' in code
    assert said == ["`net` to `fare`"]
    assert [s.splitlines()[1] for s in missing_fixtures(ast.parse(code), tests)] == ["def net():"]
    code, said = fixtures_for_none(SECOND.replace("():", "(tmp_path):"), tests, TASK)
    assert "def test_same_stop_route(net, tmp_path):" in code and 'shortest_route(net, "Market"' in code
    assert said == ["`net` to `shortest_route`"]


def test_none_stays_where_the_task_speaks_of_none_or_the_project_passes_no_fixture(transit: Path) -> None:
    tests = read_tests(transit)
    assert fixtures_for_none(MODEL_TEST, tests, "fare(None, ...) should raise a clear error") == (MODEL_TEST, [])
    other = MODEL_TEST.replace('fare(None, "Central", "Central")', 'fare(net, None, "Central")')
    assert fixtures_for_none(other, tests, TASK) == (other, [])  # the project passes a string there
    assert fixtures_for_none("def test_(:\n", tests, TASK) == ("def test_(:\n", [])


async def test_the_repaired_test_reproduces_the_crash_and_the_fix_passes_the_hidden_tests(strict, transit):
    right = (TASK_DIR / "reference" / "transit" / "routes.py").read_text()
    model = TemperedScript([block("python", MODEL_TEST), block("python transit/routes.py", right),
                            block("python", SECOND)])
    engine = engine_for(model, strict, transit)
    sink = ListSink()
    await trial_turn(engine, [], TASK, sink)
    said = [n.text for n in sink.of(Notice)]
    assert any("tomo passed the project's fixtures where the test passed None" in t for t in said), said
    kept = sink.of(ReproductionKept)
    assert kept and kept[0].by == "model" and "fare(net," in kept[0].code
    assert engine.last.outcome == "verified", said
    hidden = hidden_tests(transit, TASK_DIR, "tests/test_hidden_same_stop.py")
    assert hidden.returncode == 0, hidden.stdout
