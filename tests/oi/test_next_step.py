"""After a failed check the model reads which tests fail, which of them this turn broke, and the one next step
(issue 27: a small model otherwise repeats the first message's instruction word for word and the turn ends stuck)."""

from __future__ import annotations

from oi.oi_support import PYTEST, say, sh
from tomo.events import ListSink
from tomo.oi.next_step import failed_tests, next_step

PYTEST_OUTPUT = """..F.
FAILED tests/test_a.py::test_one - AssertionError: assert 1 == 2
ERROR tests/test_b.py::test_two - ImportError
FAILED tests/test_a.py::test_one - AssertionError: again
1 failed, 1 error, 2 passed in 0.10s
"""


def test_failed_tests_come_from_pytests_summary_once_each() -> None:
    assert failed_tests(PYTEST_OUTPUT) == ["tests/test_a.py::test_one", "tests/test_b.py::test_two"]
    assert failed_tests("Traceback ...\nAssertionError\n") == []


def test_the_next_step_names_what_this_turn_broke_and_the_edit_form() -> None:
    line = next_step(["t::a", "t::b"], {"t::a"}, "pkg/mod.py")
    assert line.startswith("[tomo: the check failed: t::a, t::b (t::b passed before this turn's changes, so it broke")
    assert "```python pkg/mod.py" in line
    unknown = next_step(["t::a"], None, None)
    assert "passed before" not in unknown and "```python path/to/module.py" in unknown
    many = next_step([f"t::{i}" for i in range(5)], set(), "m.py")
    assert "t::0, t::1, t::2 and 2 more" in many and "they broke" in many


BREAK_AREA = {"content": "```python calc.py\ndef area(r):\n    return 0\n```\n\n```bash\n" + PYTEST + " tests\n```\n"}


async def test_a_red_check_is_followed_by_the_next_step_naming_the_test_this_turn_broke(make_engine, strict,
                                                                                         project) -> None:
    """test_add fails before the turn (the bug); the model's edit breaks test_area too. The harness's baseline run
    tells them apart, and the model reads it after the red check, before its next reply."""
    engine, model = make_engine(strict, project, [BREAK_AREA, say("done")], check=f"{PYTEST} tests")
    await engine.turn([], "add() subtracts; make it add", ListSink())
    after_red = model.sent[1][-1].content
    assert "[tomo: the check failed: tests/test_area.py::test_area, tests/test_calc.py::test_add" in after_red \
        or "[tomo: the check failed: tests/test_calc.py::test_add, tests/test_area.py::test_area" in after_red
    assert "(tests/test_area.py::test_area passed before this turn's changes, so it broke" in after_red
    assert "test_add passed before" not in after_red and "```python calc.py" in after_red


async def test_a_green_check_and_a_turn_without_a_check_get_no_next_step(make_engine, strict, project) -> None:
    fix = sh("sed -i 's/return a - b/return a + b/' calc.py && " + PYTEST + " tests")
    engine, model = make_engine(strict, project, [fix, say("done")])
    await engine.turn([], "add() subtracts; make it add", ListSink())
    assert "[tomo: the check failed" not in model.sent[1][-1].content
    unfix = sh("sed -i 's/return a + b/return a - b/' calc.py && " + PYTEST + " tests/test_calc.py")
    engine, model = make_engine(strict, project, [unfix, say("done")])  # no --check: no baseline, still the line
    await engine.turn([], "look at add", ListSink())
    sent = model.sent[1][-1].content
    assert "[tomo: the check failed: tests/test_calc.py::test_add. Next:" in sent and "passed before" not in sent
    assert "```python calc.py" in sent  # the file this turn edited
