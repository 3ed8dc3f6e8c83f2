"""The task's own examples (`tomo.oi.stated`): a call the task says should give a value is the reproduction.

The sentences are the lab's (src/tomo/lab/suites/small): for each, Qwen2.5-Coder 1.5B wrote a test of something
else (merges that already worked) or asserted the bug (`to_roman(19) == 'XVIV'`). The trial turns run for real in
the sandbox; the model is scripted.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from oi import test_trials
from oi.test_honest_outcomes import TemperedScript
from oi.test_trials import SECOND, TEST_SHAPES, block, engine_for
from tomo.events import ListSink, Notice, ReproductionKept
from tomo.oi.stated import Example, reported_examples, stated_examples, stated_test
from tomo.oi.trials import trial_turn

shapes = test_trials.shapes  # the same project as test_trials': `double` adds one too many


@pytest.mark.parametrize(("task", "examples"), [
    ('merge_busy([(540, 600), (600, 660)]) should give\n[(540, 660)]. Please write a test first.',
     [("merge_busy([(540, 600), (600, 660)])", "[(540, 660)]")]),
    ("to_roman(9) returns 'VIV' instead of 'IX', and 19 gives 'XVIV'.", [("to_roman(9)", "'IX'")]),
    ('convert(100, "F", "C") returns 37 instead of 37.77..., and convert(0, "F", "C") gives -18 instead of about '
     '-17.78.', [('convert(100, "F", "C")', "pytest.approx(37.77, abs=0.01)"),
                 ('convert(0, "F", "C")', "pytest.approx(-17.78, abs=0.005)")]),
    ('slugify("Hello, Wörld!", separator="_") should give "hello_world", and permalink("Hello World", date(2024, '
     '3, 5), separator="_") must return "/2024/03/05/hello_world/".',
     [('slugify("Hello, Wörld!", separator="_")', '"hello_world"'),
      ('permalink("Hello World", date(2024, 3, 5), separator="_")', '"/2024/03/05/hello_world/"')]),
    # what the code does now is no expected value, nor is a value that is not Python, nor a call of a method
    ("load([defaults, local]) still gives 'server.port': '8000'. parse('1h') gives 3600.", []),
    ("add_business_days(friday, 1) should be Monday March 4th.", []),
    ("cart.total() should give 5, but (1 + 2) should be 3 and f(x) should give about 20.", [("cart.total()", "5")]),
])
def test_only_what_the_task_says_should_come_out_is_read(task: str, examples: list[tuple[str, str]]) -> None:
    assert [(e.call, e.expected) for e in stated_examples(task)] == examples


def test_the_examples_become_one_test_each() -> None:
    code = stated_test([Example("f(1)", "2"), Example("g()", "[3]")])
    assert code == ("def test_the_task_s_example_1():\n    assert f(1) == 2\n\n\n"
                    "def test_the_task_s_example_2():\n    assert g() == [3]\n")
    assert stated_test([]) == ""


async def test_a_stated_example_that_fails_now_is_the_reproduction_without_asking_the_model(strict, shapes: Path):
    model = TemperedScript([block("python shapes.py", "def double(x):\n    return add(x, x)\n"),
                            block("python", SECOND)])
    engine = engine_for(model, strict, shapes)
    sink = ListSink()
    await trial_turn(engine, [], "double(2) returns 5 instead of 4. Please fix double.", sink)
    assert engine.last.outcome == "verified" and engine.last.rounds == 2  # the fix and the second test: no test asked
    assert "write a test" not in model.sent[0][-1].content.lower()
    written = (shapes / "tests" / "test_tomo_repro.py").read_text()
    assert written == "from shapes import double\ndef test_the_task_s_example_1():\n    assert double(2) == 4\n"
    assert any(n.text.startswith("reproduction kept: the task's own examples (`double(2)` should give `4`)")
               for n in sink.of(Notice))
    assert [(k.path, k.code, k.by) for k in sink.of(ReproductionKept)] == [("tests/test_tomo_repro.py", written,
                                                                            "task")]


async def test_a_second_test_that_fails_where_the_task_s_examples_pass_leaves_the_fix_unverified(strict, shapes):
    """The task's examples are the task's words: a model's second test that fails on a fix they pass is likelier
    wrong than the fix (s42's temperature-convert: `convert(37, "F", "C") == approx(37.8)`, 100 read as 37). The fix
    stays, never verified, and the failing test does not stay in the project."""
    wrong_second = SECOND.replace("double(3) == 6", "double(3) == 7")
    model = TemperedScript([block("python shapes.py", "def double(x):\n    return add(x, x)\n"),
                            block("python", wrong_second)])
    engine = engine_for(model, strict, shapes)
    sink = ListSink()
    await trial_turn(engine, [], "double(2) returns 5 instead of 4. Please fix double.", sink)
    said = [n.text for n in sink.of(Notice)]
    assert any("a second test, asked afresh, fails on this fix (tests/test_tomo_repro_2.py removed), while the "
               "task's own examples pass: the fix stays: the turn stays unverified" in t for t in said), said
    assert engine.last.outcome == "unverified" and engine.last.rounds == 2
    assert "return add(x, x)\n" in (shapes / "shapes.py").read_text()
    assert not (shapes / "tests" / "test_tomo_repro_2.py").exists()


async def test_an_example_on_an_object_the_task_does_not_define_drops_only_itself(strict, shapes: Path):
    model = TemperedScript([block("python shapes.py", "def double(x):\n    return add(x, x)\n"),
                            block("python", SECOND)])
    engine = engine_for(model, strict, shapes)
    await trial_turn(engine, [], "cart.total() should give 5, and double(2) should give 4. Fix double.", ListSink())
    assert engine.last.outcome == "verified" and engine.last.rounds == 2
    assert "def test_the_task_s_example_1():\n    assert double(2) == 4\n" in (
        shapes / "tests" / "test_tomo_repro.py").read_text()


async def test_examples_that_already_hold_leave_the_reproduction_to_the_model(strict, shapes: Path):
    repro = "from shapes import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
    model = TemperedScript([block("python", repro), block("python shapes.py", "def double(x):\n    return add(x, x)\n"),
                            block("python", SECOND)])
    engine = engine_for(model, strict, shapes)
    sink = ListSink()
    await trial_turn(engine, [], "add(2, 3) should give 5, which it does, but double(2) is off by one. Fix it.", sink)
    assert engine.last.outcome == "verified" and engine.last.rounds == 3
    assert any("the task's own examples are no reproduction (it passes" in n.text for n in sink.of(Notice))
    assert (shapes / "tests" / "test_tomo_repro.py").read_text() == repro
    assert (shapes / "tests" / "test_shapes.py").read_text() == TEST_SHAPES
    assert "return add(x, x)\n" in (shapes / "shapes.py").read_text()


def test_a_result_the_task_reports_as_wrong_is_asserted_gone_printed_when_it_is_no_literal():
    task = ("add_business_days(date(2024, 3, 1), 1) returns 2024-03-02, but March 1st is a Friday, so it should be "
            "Monday March 4th. k(1) gives 'a', which is wrong. g(2) gives 5 and that is right. h(3) returns [1, 2] "
            "instead of [2]. m(2) returns 7. That is wrong.")
    # g: nothing says it is wrong; h: the expected value is stated (stated_examples takes it); m: another sentence
    assert [e.assertion for e in reported_examples(task)] == [
        "assert str(add_business_days(date(2024, 3, 1), 1)) != '2024-03-02'", "assert k(1) != 'a'"]
