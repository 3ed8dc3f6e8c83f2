"""Trials (`tomo.oi.trials`): a reproduction first, then fixes asked afresh, each judged by it in the real sandbox.

The scripted replies are what Qwen2.5-Coder 1.5B was seen sending in the lab: a test of a neighbouring function, a
"fix" that inverts a condition, the same fix twice. The harness must keep only a test that fails because of the
problem, put every failed trial back byte for byte, and say "verified" only for a fix the reproduction and the
project's check passed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from oi.oi_support import LIMITS, PYTEST
from oi.test_honest_outcomes import TemperedScript
from tomo.events import BlockStarted, ListSink, Notice, ReproductionKept
from tomo.oi.engine import Engine
from tomo.oi.repro_checks import not_failing_by_the_problem, repeated_calls
from tomo.oi.trial_requests import Repro, fix_request, reproduce_request
from tomo.oi.trials import runs_pytest, trial_turn

SHAPES = '''\
def add(a, b):
    return a + b


def double(x):
    """Twice x."""
    return add(x, x) + 1
'''
TEST_SHAPES = "from shapes import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
# no "but", "should", "wrong": a reported wrong result would be the reproduction (tomo.oi.stated.reported_examples),
# and these tests are about the model's own tests
TASK = "double(2) returns 5, and twice 2 is 4. Please fix double."
REPRO = "from shapes import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
WRONG = "def double(x):\n    return add(x, x) - 1\n"
RIGHT = "def double(x):\n    return add(x, x)\n"
SECOND = "from shapes import double\n\n\ndef test_double_three():\n    assert double(3) == 6\n"  # asked after a pass


def block(label: str, code: str) -> dict[str, str]:
    return {"content": f"Here it is.\n\n```{label}\n{code}```\n"}


@pytest.fixture
def shapes(tmp_path: Path) -> Path:
    root = tmp_path / "shapes"
    (root / "tests").mkdir(parents=True)
    (root / "shapes.py").write_text(SHAPES)
    (root / "tests" / "test_shapes.py").write_text(TEST_SHAPES)
    (root / "conftest.py").write_text("")
    return root


def engine_for(model: TemperedScript, sandbox, root: Path, **kwargs) -> Engine:
    kwargs.setdefault("max_rounds", 6)
    return Engine(model, sandbox, workspace=root, context=False, limits=LIMITS, check=PYTEST, claim="repro", **kwargs)


def commands(sink: ListSink) -> list[str]:
    return [e.code.strip() for e in sink.of(BlockStarted)]


async def refused_then_right(strict, shapes: Path, *refused: str) -> tuple[TemperedScript, Engine, ListSink,
                                                                         list[str]]:
    """A turn whose model writes each of ``refused`` as its reproduction, then REPRO, the right fix and SECOND; and
    the "not a reproduction" notices it gave."""
    model = TemperedScript([*(block("python", code) for code in refused), block("python", REPRO),
                            block("python shapes.py", RIGHT), block("python", SECOND)])
    engine = engine_for(model, strict, shapes)
    sink = ListSink()
    await trial_turn(engine, [], TASK, sink)
    return model, engine, sink, [n.text for n in sink.of(Notice) if n.text.startswith("not a reproduction")]


async def test_once_a_trial_gave_an_earlier_one_back_later_trials_stay_a_step_hotter(strict, shapes):
    """s47: after a failed trial at the retry temperature Qwen 1.5B gave an earlier trial back in most replies, after
    a hotter one hardly ever; so a turn whose model repeated itself once samples every later trial a step hotter."""
    other = "def double(x):\n    return add(x, x) + 1\n"
    model = TemperedScript([block("python", REPRO), block("python shapes.py", WRONG), block("python shapes.py", WRONG),
                            block("python shapes.py", other), block("python shapes.py", RIGHT),
                            block("python", SECOND)])
    engine = engine_for(model, strict, shapes)
    sink = ListSink()
    await trial_turn(engine, [], TASK, sink)
    assert engine.last.outcome == "verified"
    assert [n.text for n in sink.of(Notice)].count("this trial changed nothing new (no file, or what an earlier trial "
                                                   "wrote): not run again") == 1
    # the repro and the first trial as usual, the second at the retry temperature; the repeat makes the third a step
    # hotter, and the fourth, after the third tried something new, stays there; the second test as usual (hot)
    assert model.seen == [0.2, 0.2, 0.8, 1.0, 1.0, 0.8]


async def test_a_failed_trial_is_put_back_and_a_fresh_hotter_one_is_verified(strict, shapes):
    model = TemperedScript([block("python tests/test_mine.py", REPRO), block("python shapes.py", WRONG),
                            block("python shapes.py", RIGHT), block("python", SECOND)])
    engine = engine_for(model, strict, shapes)
    sink = ListSink()
    messages = await trial_turn(engine, [], TASK, sink)
    summary = engine.last
    assert summary.outcome == "verified" and summary.verified and summary.ended_by == "model"
    # the second test passed on the fix too: it is removed again, and the project's check ran after that
    assert summary.rounds == 4 and summary.files_changed == ["shapes.py", "tests/test_tomo_repro.py"]
    assert "return add(x, x)\n" in (shapes / "shapes.py").read_text()
    assert (shapes / "tests" / "test_tomo_repro.py").read_text() == REPRO  # tomo's file, whatever the label said
    assert not (shapes / "tests" / "test_mine.py").exists()
    assert summary.gates["repro"].on is False and summary.evidence.satisfied  # --claim repro: a red came first
    assert model.seen == [0.2, 0.2, 0.8, 0.8]  # the repro and the first trial at the working temperature, then hot
    # every request is fresh: the system prompt and one message; the second trial reads the first one's diff and
    # what it gave, marked as not working, and nothing of the repro request
    assert [len(sent) for sent in model.sent] == [2, 2, 2, 2]
    second = model.sent[2][-1].content
    assert "An earlier fix did not work" in second and "+    return add(x, x) - 1" in second
    assert "assert 3 == 4" in second and "An earlier fix" not in model.sent[1][-1].content
    assert "assert double(2) == 4" in model.sent[1][-1].content and "assert 5 == 4" in model.sent[1][-1].content
    assert any("trial failed: shapes.py put back" in n.text for n in sink.of(Notice))
    ran = commands(sink)
    assert ran.count(f"{PYTEST} tests/test_tomo_repro.py") == 3 and ran.count(PYTEST) == 2  # check only when green
    assert ran.count(f"{PYTEST} tests/test_tomo_repro_2.py") == 2  # on the fix, then once without it
    assert "Write a different test of what the task asks" in model.sent[3][-1].content
    assert any("a second test, asked afresh, passes on the fix too" in n.text for n in sink.of(Notice))
    assert not (shapes / "tests" / "test_tomo_repro_2.py").exists()
    assert messages[0].role == "user" and SECOND.strip() in messages[1].content  # the session keeps the last exchange


async def test_a_fix_that_only_the_model_s_own_weak_test_passes_is_caught_by_a_second_test(strict, shapes):
    """Measured: Qwen 1.5B's reproduction asserted a footer for page 3 of 2, a trial "fixed" it by breaking
    `has_previous`, the project's check passed, and tomo said verified. A second test, asked afresh after the pass,
    must hold on the fix too."""
    weak = "from shapes import double\n\n\ndef test_double():\n    assert double(2) != 5\n"
    bogus = "def double(x):\n    return 0\n"
    model = TemperedScript([block("python", weak), block("python shapes.py", bogus), block("python", SECOND),
                            block("python shapes.py", RIGHT)])
    engine = engine_for(model, strict, shapes)
    sink = ListSink()
    await trial_turn(engine, [], TASK, sink)
    summary = engine.last
    assert any("a second test, asked afresh, fails on this fix: shapes.py put back" in n.text for n in sink.of(Notice))
    assert summary.outcome == "verified" and summary.rounds == 4  # no third test: the second already judged it
    assert "return add(x, x)\n" in (shapes / "shapes.py").read_text()
    assert (shapes / "tests" / "test_tomo_repro_2.py").read_text() == SECOND  # it stays: it judged the fix
    assert [(k.path, k.by) for k in sink.of(ReproductionKept)] == [("tests/test_tomo_repro.py", "model"),
                                                                   ("tests/test_tomo_repro_2.py", "second")]
    last = model.sent[3][-1].content
    assert "A fix must pass this second test too" in last and "double(3) == 6" in last and "return 0" in last
    ran = commands(sink)
    assert ran[-3:] == [f"{PYTEST} tests/test_tomo_repro.py", f"{PYTEST} tests/test_tomo_repro_2.py", PYTEST]


async def test_a_pass_that_never_ran_a_definition_the_task_names_is_not_verified(strict, shapes):
    """Measured: for "add --delimiter ... and have main pass it to read_column", Qwen 1.5B's tests only parsed the
    new option; a trial that added it to the parser passed both, and tomo said verified. What the task names must
    have run in a passing test: the change stays, unverified, and says why."""
    (shapes / "shapes.py").write_text(SHAPES + "\n\ndef quadruple(x):\n    return 4 * x\n")
    task = "double(2) returns 5, but twice 2 is 4. Please fix double, and make quadruple use it."
    model = TemperedScript([block("python", REPRO), block("python shapes.py", RIGHT), block("python", SECOND)])
    engine = engine_for(model, strict, shapes)
    sink = ListSink()
    await trial_turn(engine, [], task, sink)
    summary = engine.last
    assert summary.outcome == "unverified" and summary.ended_by == "model"
    assert "the task names `quadruple` (shapes.py), which no passing test ran" in summary.reason
    assert "return add(x, x)\n" in (shapes / "shapes.py").read_text()  # the change is kept: only the claim is not
    assert any("the turn stays unverified" in n.text for n in sink.of(Notice))


async def test_a_test_that_passes_or_fails_by_its_own_mistake_is_not_a_reproduction(strict, shapes):
    passes = "from shapes import add\n\n\ndef test_add_again():\n    assert add(1, 1) == 2\n"
    broken = "def test_double():\n    assert triple(2) == 6\n"  # a name nothing defines: NameError
    model, engine, _sink, rejected = await refused_then_right(strict, shapes, passes, broken)
    assert engine.last.verified and engine.last.rounds == 5
    assert model.seen == [0.2, 0.8, 0.8, 0.2, 0.8]
    assert (shapes / "tests" / "test_tomo_repro.py").read_text() == REPRO
    assert len(rejected) == 2 and "it passes" in rejected[0] and "`triple`, which nothing defines" in rejected[1]
    # each next request shows the rejected test and why: what the code does now, or the test's own mistake
    assert "assert add(1, 1) == 2" in model.sent[1][-1].content and "It passes now" in model.sent[1][-1].content
    assert "triple(2)" in model.sent[2][-1].content and "which nothing defines" in model.sent[2][-1].content
    # each rejected test was removed before the next was written: one reproduction file, at tomo's path
    assert sorted(p.name for p in (shapes / "tests").glob("test_*.py")) == ["test_shapes.py", "test_tomo_repro.py"]


async def test_a_copied_placeholder_or_a_call_missing_arguments_is_not_a_reproduction(strict, shapes):
    placeholder = "from shapes import double\n\n\ndef test_double():\n    assert double(...) == expected\n"
    too_few = "from shapes import add\n\n\ndef test_add():\n    assert add(2) == 4\n"
    model, engine, _sink, rejected = await refused_then_right(strict, shapes, placeholder, too_few)
    assert len(rejected) == 2 and "`expected`, which nothing defines" in rejected[0]
    assert "missing 1 required positional argument" in rejected[1]
    assert engine.last.verified and engine.last.rounds == 5
    assert "<call double as the task says" in model.sent[0][-1].content


REFUSING = SHAPES.replace('    """Twice x."""\n', '    """Twice x."""\n    if isinstance(x, int) and x < 0:\n'
                          '        raise ValueError(f"x must be >= 0, got {x}")\n'
                          '    if isinstance(x, str) and not x.isalpha():\n'
                          '        raise TypeError(f"cannot double {x!r}")\n')


async def test_a_test_the_code_refuses_by_design_or_that_reads_a_placeholder_path_is_not_a_reproduction(strict,
                                                                                                      shapes):
    """Measured: 51 of 60 tests Qwen 1.5B wrote and tomo kept in the lab fail on the task's reference solution too;
    five failed by the code's own refusal of their input (`OutOfStock: cannot ship 8 ...`), one read
    'path/to/your/file.csv'. Neither shows the problem, and no fix could ever pass them."""
    (shapes / "shapes.py").write_text(REFUSING)
    refused = "from shapes import double\n\n\ndef test_double():\n    assert double(-1) == -2\n"
    placeholder = ('from shapes import double\n\n\ndef test_double():\n'
                   '    assert double(len(open("path/to/your/file.txt").read())) == 4\n')
    model, engine, sink, rejected = await refused_then_right(strict, shapes, refused, placeholder)
    assert len(rejected) == 2, rejected
    assert ("`ValueError: x must be >= 0, got -1`, which shapes.py raises on purpose, and the task names no "
            "ValueError") in rejected[0]
    assert "it reads 'path/to/your/file.txt', an example's placeholder" in rejected[1]
    assert "raises on purpose" in model.sent[1][-1].content  # the next request says why, to write a better one
    assert engine.last.verified and (shapes / "tests" / "test_tomo_repro.py").read_text() == REPRO
    # the one test kept, as written, for the lab to judge on a reference solution (`tomo lab repros`)
    assert [(k.path, k.code, k.by) for k in sink.of(ReproductionKept)] == [("tests/test_tomo_repro.py", REPRO,
                                                                            "model")]


async def test_a_test_that_expects_an_error_the_task_never_speaks_of_is_not_a_reproduction(strict, shapes):
    """s46: a second test of the LRU cache wanted `get` to raise ValueError, which a task about entries thrown away
    too early never asks for; it put the right fix back."""
    invented = ("import pytest\nfrom shapes import double\n\n\ndef test_double():\n    with pytest.raises(ValueError):"
                "\n        double(2)\n")
    _model, engine, _sink, rejected = await refused_then_right(strict, shapes, invented)
    assert len(rejected) == 1 and "it expects ValueError, and the task speaks of no error or refusal" in rejected[0]
    assert engine.last.verified
    said = "double(2) should raise an error for even numbers. Please fix double."  # the task asks for one: it stands
    assert not_failing_by_the_problem(1, "FAILED t.py::test_double - Failed: DID NOT RAISE <class 'ValueError'>",
                                      said) == ""
    assert "expects KeyError" in not_failing_by_the_problem(
        1, "FAILED t.py::test - Failed: DID NOT RAISE <class 'builtins.KeyError'>", "entries vanish too early")


async def test_a_block_whose_first_line_names_the_test_file_is_read_without_it(strict, shapes):
    """Measured: Qwen 1.5B put the test's path on the block's first line, and tomo ran `tests/test_tomo_repro.py`
    as Python (a NameError for `tests`), twice in one lab run."""
    model = TemperedScript([block("python", "tests/test_tomo_repro.py\n" + REPRO), block("python shapes.py", RIGHT),
                            block("python", SECOND)])
    engine = engine_for(model, strict, shapes)
    await trial_turn(engine, [], TASK, ListSink())
    assert engine.last.verified and engine.last.rounds == 3
    assert (shapes / "tests" / "test_tomo_repro.py").read_text() == REPRO


async def test_a_test_that_reads_a_file_it_never_made_is_not_a_reproduction(strict, shapes):
    missing = ('from shapes import double\n\n\ndef test_double():\n'
               '    assert double(len(open("data/sizes.txt").read())) == 4\n')
    _model, engine, _sink, rejected = await refused_then_right(strict, shapes, missing)
    assert len(rejected) == 1 and "FileNotFoundError: [Errno 2] No such file or directory: 'data/sizes.txt'" in (
        rejected[0]) and "pytest's tmp_path" in rejected[0]
    assert engine.last.verified


@pytest.mark.parametrize(("task", "test"), [
    ("double(-1) raises ValueError, but doubling -1 should give -2. Please fix double.", "double(-1) == -2"),
    ("double('a-b') is refused, though twice 'a-b' is 'a-ba-b'. Please fix double.", "double('a-b') == 'a-ba-b'")],
    ids=["the-task-names-the-error", "the-refusal-quotes-what-the-task-says"])
async def test_a_refusal_the_task_reports_is_the_problem(strict, shapes, task: str, test: str):
    (shapes / "shapes.py").write_text(REFUSING)
    code = f"from shapes import double\n\n\ndef test_double():\n    assert {test}\n"
    model = TemperedScript([block("python", code), block("python shapes.py", RIGHT), block("python", SECOND)])
    engine = engine_for(model, strict, shapes)
    sink = ListSink()
    await trial_turn(engine, [], task, sink)
    assert "reproduction kept: tests/test_tomo_repro.py fails before any fix" in [n.text for n in sink.of(Notice)]
    assert engine.last.verified and engine.last.rounds == 3


async def test_a_name_the_test_never_imported_is_imported_from_where_the_project_says(strict, shapes):
    (shapes / "shapes.py").write_text("from fractions import Fraction\n\n\n" + SHAPES)
    lazy = "def test_double():\n    assert double(Fraction(1, 2)) == 1\n    assert double(2) == 4\n"
    model = TemperedScript([block("python", lazy), block("python shapes.py", RIGHT), block("python", SECOND)])
    engine = engine_for(model, strict, shapes)
    sink = ListSink()
    await trial_turn(engine, [], TASK, sink)
    assert engine.last.verified and engine.last.rounds == 3
    written = (shapes / "tests" / "test_tomo_repro.py").read_text()
    assert written == "from fractions import Fraction\nfrom shapes import double\n" + lazy
    assert any("tomo added the imports" in n.text and "from shapes import double" in n.text for n in sink.of(Notice))


async def test_a_number_the_task_states_is_compared_to_the_precision_it_states_it_in(strict, shapes):
    """Measured: for "it should be 37.8 °C" Qwen 1.5B asserted `pytest.approx(37.8)`, which the right answer
    (37.77...) fails, so no trial could pass."""
    (shapes / "shapes.py").write_text(SHAPES + "\n\ndef to_celsius(f):\n    return (f - 32) * 5 // 9\n")
    # "gives 37.0. It should be": not in one sentence, so no reported wrong result is the reproduction: the model's is
    task = "to_celsius(100) gives 37.0. It should be 37.8 (and to_celsius(0) about -17.78). Please fix it."
    rounded = "from shapes import to_celsius\n\n\ndef test_c():\n    assert to_celsius(100) == pytest.approx(37.8)\n" \
              "    assert to_celsius(0) == -17.78\n"
    right = "```\n11:     return (f - 32) * 5 / 9\n```\n"  # the second trial asks for the wrong line alone
    wrong = "def to_celsius(f):\n    return round((f - 32) * 5 / 9)\n"
    second = "from shapes import to_celsius\n\n\ndef test_above():\n    assert to_celsius(33) > 0.5\n"
    model = TemperedScript([block("python", rounded), block("python shapes.py", wrong),
                            {"content": right}, block("python", second)])
    engine = engine_for(model, strict, shapes)
    sink = ListSink()
    await trial_turn(engine, [], task, sink)
    assert engine.last.outcome == "verified" and "* 5 / 9" in (shapes / "shapes.py").read_text()
    written = (shapes / "tests" / "test_tomo_repro.py").read_text()
    assert "pytest.approx(37.8, abs=0.05)" in written and "== pytest.approx(-17.78, abs=0.005)" in written
    assert written.startswith("import pytest\n")
    assert any("to the precision it is written in): 37.8, -17.78" in n.text for n in sink.of(Notice))


async def test_a_failed_reproduction_is_no_evidence_for_a_fix(strict, shapes):
    # the test imports shapes (so it runs the file the fix changes) and then fails by its own mistake
    (shapes / "tests" / "test_kind.py").write_text("from shapes import double\n\n\ndef test_kind():\n"
                                                   "    assert isinstance(double(1), int)\n")
    broken = "from shapes import double\n\n\ndef test_double():\n    assert double(2) == triple(2)\n"
    passes = "from shapes import double\n\n\ndef test_double():\n    assert double(2) == 5\n"
    model = TemperedScript([block("python", broken), block("python", passes), block("python", passes),
                            block("python shapes.py", "def double(x):\n    return add(x, x) + 0\n")])
    engine = engine_for(model, strict, shapes)
    sink = ListSink()
    await trial_turn(engine, [], TASK, sink)
    summary = engine.last
    assert summary.files_changed == ["shapes.py"] and summary.outcome == "unverified"  # the check passed, but...
    assert "--claim repro" in summary.reason and "not preceded by a failing check" in summary.reason
    assert any("no reproduction" in n.text for n in sink.of(Notice))


async def test_a_test_that_raises_another_error_than_the_task_s_traceback_is_no_reproduction(strict, shapes):
    """Measured: for a crash quoted with its traceback, Qwen 1.5B's test passed `None` and failed with another
    TypeError before ever reaching the crash, and it was kept as the reproduction."""
    task = ('double("a") crashes:\n\nTraceback (most recent call last):\n  File "shapes.py", line 7, in double\n'
            'TypeError: can only concatenate str (not "int") to str\n\nIt should give "aa".')
    other = "from shapes import double\n\n\ndef test_double():\n    assert double(None) is None\n"
    same = 'from shapes import double\n\n\ndef test_double():\n    assert double("b") == "bb"\n'
    model = TemperedScript([block("python tests/t.py", other), block("python tests/t.py", same),
                            block("python shapes.py", RIGHT), block("python", SECOND)])
    engine = engine_for(model, strict, shapes, max_rounds=4)
    sink = ListSink()
    await trial_turn(engine, [], task, sink)
    said = [n.text for n in sink.of(Notice)]
    assert any("ends in `TypeError: can only concatenate str (not \"int\") to str`, and the test raised `TypeError: "
               "unsupported operand" in t for t in said)
    assert any("reproduction kept" in t for t in said)  # the same error with another value is the same crash
    assert "double(None)" in model.sent[1][-1].content  # the rejected test is shown to the next request


async def test_a_missing_name_is_the_problem_only_when_the_task_asks_for_it(strict, shapes):
    made_up = "from shapes import double\n\n\ndef test_double():\n    assert double.cached(2) == 4\n"
    asked = "from shapes import triple\n\n\ndef test_triple():\n    assert triple(2) == 6\n"
    zero = "from shapes import triple\n\n\ndef test_zero():\n    assert triple(0) == 0\n"
    model = TemperedScript([block("python", made_up), block("python", asked),
                            block("python shapes.py", "def triple(x):\n    return x * 3\n"), block("python", zero)])
    engine = engine_for(model, strict, shapes)
    sink = ListSink()
    # worded as a need, not "add": a feature task tomo knows (tomo.oi.feature) asks the model for no test at all
    await trial_turn(engine, [], "shapes.py needs triple(x): three times x.", sink)
    rejected = [n.text for n in sink.of(Notice) if n.text.startswith("not a reproduction")]
    assert len(rejected) == 1 and "has no attribute 'cached'" in rejected[0] and "names no `cached`" in rejected[0]
    # `triple` cannot be imported yet (pytest exit 2, at collection), and the task asks for it: that is the problem
    assert engine.last.verified and engine.last.rounds == 4
    assert "def triple(x)" in (shapes / "shapes.py").read_text()


async def test_the_reproduction_example_imports_the_function_the_task_calls(strict, shapes):
    model = TemperedScript([block("python", REPRO), block("python shapes.py", RIGHT)])
    engine = engine_for(model, strict, shapes)
    await trial_turn(engine, [], TASK, ListSink())
    assert "from shapes import double\n\n\ndef test_the_problem():\n    <call double as" in model.sent[0][-1].content


async def test_the_request_shows_a_project_test_and_a_fixture_the_test_names_is_copied_in(strict, shapes):
    (shapes / "tests" / "test_twice.py").write_text(
        "import pytest\n\nfrom shapes import double\n\n\n@pytest.fixture\ndef seven():\n    return 7\n\n\n"
        "def test_double_is_more(seven):\n    assert double(seven) > seven\n")
    uses_fixture = "from shapes import double\n\n\ndef test_double(seven):\n    assert double(seven) == 14\n"
    model = TemperedScript([block("python", uses_fixture), block("python shapes.py", RIGHT)])
    engine = engine_for(model, strict, shapes)
    sink = ListSink()
    await trial_turn(engine, [], TASK, sink)
    asked = model.sent[0][-1].content
    assert "One of the project's tests calls `double` like this:" in asked
    assert "@pytest.fixture\ndef seven():\n    return 7\n\n\ndef test_double_is_more(seven):" in asked
    assert model.sent[0][0].role == "system" and "nothing you\nwrite is run as a command" in model.sent[0][0].content
    written = (shapes / "tests" / "test_tomo_repro.py").read_text()
    assert written.startswith("import pytest\n@pytest.fixture\ndef seven():\n    return 7\n")
    assert any("copied the fixtures" in n.text and "seven" in n.text for n in sink.of(Notice))
    assert engine.last.rounds == 2 and engine.last.files_changed == ["shapes.py", "tests/test_tomo_repro.py"]


async def test_when_no_trial_passes_every_file_is_as_the_turn_found_it(strict, shapes):
    # the failing test ran double and add: the third trial is the second round over them, so it asks for a line
    model = TemperedScript([block("python", REPRO), block("python shapes.py", WRONG), block("python shapes.py", WRONG),
                            {"content": "```\n7:     return x * 3\n```"}])
    engine = engine_for(model, strict, shapes, max_rounds=5)  # one round stays for a second test, unused here
    sink = ListSink()
    await trial_turn(engine, [], TASK, sink)
    summary = engine.last
    assert summary.outcome == "unchanged" and not summary.verified and summary.ended_by == "rounds"
    assert (shapes / "shapes.py").read_text() == SHAPES
    assert sorted(p.name for p in (shapes / "tests").iterdir() if p.suffix == ".py") == ["test_shapes.py"]
    # the repeated wrong fix was not run again: the repro ran for the first trial and the third only (and at start)
    assert commands(sink).count(f"{PYTEST} tests/test_tomo_repro.py") == 3
    assert any("changed nothing new" in n.text for n in sink.of(Notice))
    assert any("test_tomo_repro.py removed" in n.text for n in sink.of(Notice))


async def test_a_failed_trial_that_changed_a_file_that_is_not_code_says_it_stayed(strict, shapes):
    (shapes / "NOTES.txt").write_text("doubling adds one\n")
    wrong_with_notes = {"content": f"```python shapes.py\n{WRONG}```\n\n```python NOTES.txt\ndoubling subtracts\n```\n"}
    model = TemperedScript([block("python", REPRO), wrong_with_notes])
    engine = engine_for(model, strict, shapes, max_rounds=2)
    sink = ListSink()
    await trial_turn(engine, [], TASK, sink)
    assert (shapes / "shapes.py").read_text() == SHAPES  # code is put back byte for byte...
    assert any("NOTES.txt stayed as the trial left it" in n.text for n in sink.of(Notice))  # ...and the rest is said
    assert engine.last.outcome == "unverified" and engine.last.files_changed == ["NOTES.txt"]


async def test_a_project_whose_check_already_fails_needs_no_written_reproduction(strict, shapes):
    (shapes / "tests" / "test_double.py").write_text("from shapes import double\n\n\ndef test_double():\n"
                                                     "    assert double(3) == 6\n")
    five = "from shapes import double\n\n\ndef test_five():\n    assert double(5) == 10\n"
    model = TemperedScript([block("python shapes.py", RIGHT), block("python", five)])
    engine = engine_for(model, strict, shapes)
    await trial_turn(engine, [], "the test fails; fix double", ListSink())
    assert engine.last.verified and engine.last.rounds == 2  # the fix, then a second test that passes on it
    assert "assert 7 == 6" in model.sent[0][-1].content  # the failing check is what the trial reads
    assert not (shapes / "tests" / "test_tomo_repro.py").exists()


async def test_a_second_test_that_only_repeats_the_failing_check_s_call_leaves_the_fix_unverified(strict, shapes):
    # the lab's fix-duration-spaces: `match` for `fullmatch` passed the project's one failing test, and the second
    # test asserted `parse_duration("1h 30m") == 5400` again; the hidden tests failed
    (shapes / "tests" / "test_double.py").write_text("from shapes import double\n\n\ndef test_double():\n"
                                                     "    assert double(3) == 6\n")
    again = "from shapes import double\n\n\ndef test_again():\n    assert double(3) == 6, 'twice three'\n"
    model = TemperedScript([block("python shapes.py", RIGHT), block("python", again)])
    engine = engine_for(model, strict, shapes)
    sink = ListSink()
    await trial_turn(engine, [], "the test fails; fix double", sink)
    assert engine.last.outcome == "unverified" and not engine.last.verified and engine.last.rounds == 2
    assert any("the second test only repeats the first one's `double(3)`" in n.text for n in sink.of(Notice))
    assert "return add(x, x)\n" in (shapes / "shapes.py").read_text()  # the fix stays, said as unverified


async def test_a_second_test_that_passes_without_the_fix_too_leaves_it_unverified(strict, shapes):
    neutral = "from shapes import add\n\n\ndef test_add_again():\n    assert add(1, 1) == 2\n"  # true all along
    model = TemperedScript([block("python", REPRO), block("python shapes.py", RIGHT), block("python", neutral)])
    engine = engine_for(model, strict, shapes)
    sink = ListSink()
    await trial_turn(engine, [], TASK, sink)
    assert engine.last.outcome == "unverified" and not engine.last.verified
    assert any("the second test passes without the fix too" in n.text for n in sink.of(Notice))
    assert "return add(x, x)\n" in (shapes / "shapes.py").read_text()  # the fix is laid in again after that run
    assert not (shapes / "tests" / "test_tomo_repro_2.py").exists()


def test_a_second_test_repeats_the_first_only_when_every_call_it_makes_is_one_the_first_makes():
    first = "def test_a():\n    assert parse('1h 30m') == 5400\n    assert len(parse('2h')) == 1\n"
    assert repeated_calls('def test_b():\n    assert parse("1h 30m") == 90 * 60\n', first) == ["parse('1h 30m')"]
    assert repeated_calls("def test_b():\n    assert parse('1h 30m') == parse('90m')\n", first) == []  # new
    assert repeated_calls("import pytest\n\n\ndef test_b():\n    with pytest.raises(ValueError):\n"
                           "        parse('2h')\n", first) == ["parse('2h')"]  # pytest's own call not counted
    assert repeated_calls("def test_b():\n    assert True\n", first) == []  # nothing to compare


async def test_a_trial_that_edits_the_reproduction_is_not_laid_in(strict, shapes):
    cheat = "from shapes import double\n\n\ndef test_double():\n    assert double(2) == 5\n"
    model = TemperedScript([block("python", REPRO), block("python tests/test_tomo_repro.py", cheat),
                            block("python shapes.py", RIGHT), block("python", SECOND)])
    engine = engine_for(model, strict, shapes)
    await trial_turn(engine, [], TASK, ListSink())
    assert engine.last.verified and engine.last.rounds == 4
    assert (shapes / "tests" / "test_tomo_repro.py").read_text() == REPRO


async def test_a_trial_may_change_another_test_with_the_code_unless_the_failing_check_is_the_reproduction(strict,
                                                                                                         shapes):
    (shapes / "tests" / "test_pinned.py").write_text("from shapes import double\n\n\ndef test_pinned():\n"
                                                     "    assert double(1) == 3\n")  # pins the bug
    repinned = "```python tests/test_pinned.py\ndef test_pinned():\n    assert double(1) == 2\n```\n"
    both = {"content": f"```python shapes.py\n{RIGHT}```\n\n{repinned}"}
    model = TemperedScript([block("python", REPRO), both, block("python", SECOND)])
    engine = engine_for(model, strict, shapes)
    await trial_turn(engine, [], TASK, ListSink())
    assert engine.last.verified and "double(1) == 2" in (shapes / "tests" / "test_pinned.py").read_text()
    # when the project's failing check is the reproduction, its tests are the specification: never edited
    (shapes / "shapes.py").write_text(SHAPES)
    (shapes / "tests" / "test_tomo_repro.py").unlink()
    (shapes / "tests" / "test_pinned.py").write_text("from shapes import double\n\n\ndef test_pinned():\n"
                                                     "    assert double(1) == 2\n")  # fails now
    cheat = {"content": "```python tests/test_pinned.py\ndef test_pinned():\n    assert double(1) == 3\n```\n"}
    model = TemperedScript([cheat, cheat])
    engine = engine_for(model, strict, shapes, max_rounds=2)
    await trial_turn(engine, [], "test_pinned fails; fix it", ListSink())
    assert engine.last.outcome == "unchanged" and "double(1) == 2" in (shapes / "tests" / "test_pinned.py").read_text()


async def test_trials_without_a_pytest_check_are_a_conversation(strict, shapes):
    model = TemperedScript([{"content": "Nothing to do."}])
    engine = Engine(model, strict, workspace=shapes, context=False, limits=LIMITS, check="make test")
    sink = ListSink()
    await trial_turn(engine, [], TASK, sink)
    assert any("this turn is a conversation" in n.text for n in sink.of(Notice))
    assert engine.last.outcome == "unchanged" and len(model.sent[0]) == 2


def test_runs_pytest_reads_the_command() -> None:
    assert runs_pytest("python -m pytest -q") and runs_pytest("PYTEST_X=1 pytest") and runs_pytest("/usr/bin/pytest")
    assert not runs_pytest("make test") and not runs_pytest(None) and not runs_pytest("pytest-watch")


def test_the_requests_name_the_task_s_calls_and_the_failure() -> None:
    asked = reproduce_request("task", "tests/test_tomo_repro.py", ["from shapes import double"], ["double"])
    assert "```python tests/test_tomo_repro.py" in asked and "from shapes import double" in asked
    assert "calls `double`" in asked
    assert "from module import function" in asked  # no subject known: the placeholder
    named = reproduce_request("task", "tests/t.py", [], subject=("paging", "paginate"))
    assert "from paging import paginate\n\n\ndef test_the_problem():\n    <call paginate as the task says" in named
    assert "module import function" not in named
    repro = Repro("pytest x", "noise\n=== FAILURES ===\nE   assert 5 == 4\n", "tests/t.py", REPRO)
    fix = fix_request("task", repro, ("shapes.py", "double"))
    assert "```python shapes.py\ndef double(" in fix and "assert 5 == 4" in fix and "noise" not in fix
    assert "assert double(2) == 4" in fix
    assert "reproduces" not in fix_request("task", None, None)
    cls = fix_request("task", repro, ("shop/cart.py", "Cart"), is_class=True)
    assert "```python shop/cart.py\nclass Cart:\n    def the_method(self" in cls and "def Cart(" not in cls


@pytest.mark.parametrize(("flags", "said"), [(["--strategy", "best"], "'best' is not one of"),
                                             (["--strategy", "trials"], "add --check auto"),
                                             (["--mutants"], "add --strategy trials"),
                                             (["--textbook"], "add --mutants")])
def test_the_cli_refuses_a_bad_strategy(tmp_path: Path, flags: list[str], said: str) -> None:
    done = subprocess.run([sys.executable, "-m", "tomo", "run", "fix it", "--root", str(tmp_path), *flags],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and said in " ".join(done.stderr.split())


@pytest.mark.parametrize("second, why", [
    ({"content": "The fix looks right to me."}, "the second test is no test, so the fix is checked once"),
    (block("python", "from shapes import double\n\n\ndef test_three(no_such_fixture):\n    assert double(3) == 6\n"),
     "the second test fails by its own mistake, so the fix is checked once"),
], ids=["no-test", "its-own-mistake"])
async def test_a_fix_judged_by_the_model_s_test_alone_is_never_verified(strict, shapes, second, why):
    # the first test is the model's, and the lab found most of them wrong: one judge is not enough for a claim
    model = TemperedScript([block("python", REPRO), block("python shapes.py", RIGHT), second])
    engine = engine_for(model, strict, shapes)
    sink = ListSink()
    await trial_turn(engine, [], TASK, sink)
    summary = engine.last
    assert summary.outcome == "unverified" and not summary.verified
    assert why + ", by a test that the model wrote" in summary.reason
    assert "return add(x, x)\n" in (shapes / "shapes.py").read_text()  # the fix stays, said as unverified
    assert not (shapes / "tests" / "test_tomo_repro_2.py").exists()



class CapRecorder(TemperedScript):
    """Records each request's reply cap (what an adapter sends as `max_tokens`)."""

    def __init__(self, replies):
        super().__init__(replies)
        self.caps: list[int | None] = []

    async def chat(self, messages, tools=(), **kwargs):
        self.caps.append(kwargs.get("max_tokens"))
        return await super().chat(messages, tools, **kwargs)


@pytest.mark.parametrize("engine_cap, asked", [(None, 2048), (4096, 2048), (1000, 1000)])
async def test_a_trial_s_reply_is_capped_below_the_engine_s_own_cap(strict, shapes, engine_cap, asked):
    # the lab: two replies to a feature request looped to 4,096 tokens (497 s, 590 s) and changed nothing
    model = CapRecorder([block("python", REPRO), block("python shapes.py", RIGHT), block("python", SECOND)])
    engine = engine_for(model, strict, shapes, max_reply_tokens=engine_cap)
    await trial_turn(engine, [], TASK, ListSink())
    assert model.caps == [asked, asked, asked] and engine.last.outcome == "verified"


async def test_a_method_the_task_calls_by_its_bare_name_is_never_imported_as_a_module_s(strict, shapes):
    """The task says `set_volume(150) should give 100`, and `set_volume` is `Player.set_volume`: no import can name
    it, so the example is no test tomo can write (it once wrote `from shapes import set_volume`, which failed at
    collection) and the model writes the reproduction."""
    (shapes / "shapes.py").write_text(SHAPES + "\n\nclass Player:\n    def set_volume(self, value):\n"
                                               "        self.volume = double(value)\n")
    model = TemperedScript([block("python", REPRO), block("python shapes.py", RIGHT), block("python", SECOND)])
    engine = engine_for(model, strict, shapes)
    assert engine.homes(["set_volume", "double"], importable=True) == {"set_volume": [], "double": ["shapes.py"]}
    assert engine.homes(["set_volume"]) == {"set_volume": ["shapes.py"]}  # an edit's hint still finds it
    sink = ListSink()
    await trial_turn(engine, [], "set_volume(150) should give 100. " + TASK, sink)
    said = [n.text for n in sink.of(Notice)]
    assert not any("import set_volume" in t for t in said), said
    assert (shapes / "tests" / "test_tomo_repro.py").read_text() == REPRO  # the model's, not the task's example
    # and the fix of `double` is not called verified: the task named `set_volume`, which no passing test ran
    assert not engine.last.verified and any("no passing test ran" in t for t in said), said
