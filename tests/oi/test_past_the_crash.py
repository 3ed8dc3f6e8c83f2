"""A reproduction of a crash must not get past the line that crashed (`tomo.oi.repro_checks.past_the_crash`): the
lab's `fix-route-same-stop`, where Qwen 1.5B asserted the fare of a trip between two other stations (it ran the
crashing line, worked, and failed on an amount the task never names), in the real sandbox with the line coverage the
gates measure.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest

import tomo
from oi.oi_support import hidden_tests
from oi.test_honest_outcomes import TemperedScript
from oi.test_trials import block, engine_for
from tomo.events import ListSink, Notice, ReproductionKept
from tomo.oi.repro_checks import crash_site, past_the_crash
from tomo.oi.trials import trial_turn

TASK_DIR = Path(tomo.__file__).parent / "lab" / "suites" / "small" / "fix-route-same-stop"
TASK = tomllib.loads((TASK_DIR / "task.toml").read_text())["prompt"]
CRASH_LINE = "zones = {network.zone(stop) for stop in route}"
ANOTHER_TRIP = '''\
from decimal import Decimal
from transit.fares import fare


def test_the_problem(net):
    assert fare(net, "Central", "Airport") == Decimal("2.40")
'''
SAME_STOP = '''\
from transit.routes import shortest_route


def test_the_problem(net):
    assert shortest_route(net, "Market", "Market") == ["Market"]
'''
SAME_FARE = '''\
from decimal import Decimal
from transit.fares import fare


def test_same_stop_costs_the_base_fare(net):
    assert fare(net, "Park", "Park") == Decimal("2.40")
'''
ASSERTION = "E   AssertionError: assert Decimal('4.00') == Decimal('2.40')\n"


@pytest.fixture
def transit(tmp_path: Path) -> Path:
    root = tmp_path / "transit"
    shutil.copytree(TASK_DIR / "repo", root)
    return root


def test_the_crash_site_is_the_traceback_s_last_frame_unless_it_raises_on_purpose():
    assert crash_site(TASK) == ("transit/fares.py", CRASH_LINE)
    refusal = ('Traceback (most recent call last):\n  File "durations.py", line 19, in parse_duration\n'
               '    raise ValueError(f"not a duration: {text!r}")\nValueError: not a duration: \'1h 30m\'\n')
    assert crash_site(refusal) is None and crash_site("fare() crashes for the same stop") is None


def test_an_assertion_failing_after_the_crashing_line_ran_is_no_reproduction(transit: Path):
    line = (transit / "transit" / "fares.py").read_text().splitlines().index(f"    {CRASH_LINE}") + 1
    why = past_the_crash(TASK, transit, {"transit/fares.py": {line - 1, line}}, ASSERTION)
    assert why.startswith(f"it runs transit/fares.py line {line} (`{CRASH_LINE}`), where the task's traceback "
                          "ends in `TypeError: 'NoneType' object is not iterable`, and gets past it")
    # the line did not run (the test asserts on the route finder), the test crashed there, or no traceback
    assert past_the_crash(TASK, transit, {"transit/routes.py": {20, 21}}, ASSERTION) == ""
    crashed = "E   TypeError: 'NoneType' object is not iterable\n"
    assert past_the_crash(TASK, transit, {"transit/fares.py": {line}}, crashed) == ""
    assert past_the_crash("Same stop costs too much.", transit, {"transit/fares.py": {line}}, ASSERTION) == ""


async def test_a_model_s_test_of_another_trip_is_refused_and_one_of_the_same_stop_judges_the_fix(strict, transit: Path):
    fix = (TASK_DIR / "reference" / "transit" / "routes.py").read_text()  # the task's reference: the whole file
    model = TemperedScript([block("python", ANOTHER_TRIP), block("python", SAME_STOP),
                            block("python transit/routes.py", fix), block("python", SAME_FARE)])
    engine = engine_for(model, strict, transit)
    sink = ListSink()
    await trial_turn(engine, [], TASK, sink)
    said = [n.text for n in sink.of(Notice)]
    assert any(t.startswith("not a reproduction: it runs transit/fares.py line") for t in said), said
    assert "and gets past it" in model.sent[1][-1].content
    kept = sink.of(ReproductionKept)
    assert len(kept) == 1 and 'shortest_route(net, "Market", "Market")' in kept[0].code
    assert engine.last.outcome == "verified" and len(model.sent) == 4  # the second test: the fare of the same stop
    assert hidden_tests(transit, TASK_DIR, "tests/test_hidden_same_stop.py").returncode == 0
