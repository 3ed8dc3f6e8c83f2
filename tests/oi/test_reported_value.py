"""A result the task reports as what the code gives now (`tomo.oi.reported_value`): the values read from its words,
the model's call asserted not to give them, run by real pytest, and a trial turn whose one-token search passes that
test where the model's own expected value failed the right fix, in the real sandbox.

The project is the lab's `fix-word-counts-accents`: an ASCII letter class chops accented letters off. Qwen 1.5B's
test made the right call and expected `[("caf", 3), ("le", 2)]`, which no fix gives.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from oi.oi_support import run_pytest
from oi.test_honest_outcomes import TemperedScript
from oi.test_suspects import ROMAN
from oi.test_trials import block, engine_for
from tomo.events import ListSink, Notice, ReproductionKept
from tomo.oi.reported_value import asserts_reported, reported_value_test, reported_values
from tomo.oi.trials import trial_turn

TEXTSTATS = '''\
"""Word statistics."""

import re
from collections import Counter

_WORD = re.compile(r"[a-z]+")


def top_words(text, n=10):
    counts = Counter(_WORD.findall(text.lower()))
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:n]
'''
TASK = ("The sidebar's word statistics are broken for our French writers. For \"Le café et le thé. Café!\" the top "
        "words come out as [('caf', 2), ('le', 2)]: accented letters get chopped off. Please fix this.")
MODEL_TEST = '''\
from textstats import top_words


def test_the_problem():
    text = "Le café et le thé. Café!"
    assert len(text) > 3
    assert top_words(text, 2) == [("caf", 3), ("le", 2)]
'''


@pytest.fixture
def sidebar(tmp_path: Path) -> Path:
    root = tmp_path / "sidebar"
    (root / "tests").mkdir(parents=True)
    (root / "textstats.py").write_text(TEXTSTATS)
    (root / "conftest.py").write_text("")
    (root / "tests" / "test_textstats.py").write_text(
        "from textstats import top_words\n\n\ndef test_top():\n    assert top_words('b a b', 1) == [('b', 2)]\n")
    return root


def test_the_values_a_task_reports_are_what_the_code_gives_now_not_what_it_should():
    assert reported_values(TASK) == ["[('caf', 2), ('le', 2)]"]
    assert reported_values("to_roman(9) returns 'VIV' instead of 'IX', and 19 gives 'XVIV'.") == ["'VIV'", "'XVIV'"]
    assert reported_values("It should give 5, but it gives 6.") == ["6"]  # after "but": what happens
    assert reported_values("parse('x') should return 7. We expect it gives 8.") == []  # what is wanted
    assert reported_values("add_business_days(d, 1) returns 2024-03-02, a Saturday") == []  # 2024 starts a date
    assert reported_values("Add is_newer(a, b) that returns True only when a is newer.") == []  # a rule
    # a key of a mapping shown in part (fix-config-override) is not the value; a value before a colon of prose is
    assert reported_values("but load([defaults, local]) still gives\n'server.port': '8000'. Keys do show.") == []
    assert reported_values("It gives 'VIV': the nine is wrong.") == ["'VIV'"]
    assert reported_values("It shows a meeting from 09:15 to 10:00 as lasting -45 minutes.") == ["-45"]
    assert reported_values("The total is shown as 0, and a shift lasts 8 hours") == ["0"]  # "lasts" states a rule
    assert reported_values("It never returns 5, and it doesn't give 6; a shift shown as 7 is new.") == ["7"]


def test_the_model_s_call_asserted_not_to_give_the_reported_value_fails_on_the_bug_and_passes_on_the_fix(sidebar):
    test = reported_value_test(MODEL_TEST, reported_values(TASK), TASK)
    assert test is not None and "text = 'Le café et le thé. Café!'" in test
    assert "assert top_words(text, 2) not in ([('caf', 2), ('le', 2)],)" in test
    assert "caf', 3" not in test and "len(text)" not in test  # the model's guesses are gone
    assert run_pytest(sidebar, "test_reported.py", test).returncode == 1
    (sidebar / "textstats.py").write_text(TEXTSTATS.replace("[a-z]", r"[^\W\d_]"))
    assert run_pytest(sidebar, "test_reported.py", test).returncode == 0


def test_a_model_test_that_expects_the_reported_value_or_compares_no_call_is_left_as_it_is():
    agrees = MODEL_TEST.replace('[("caf", 3), ("le", 2)]', "[('caf', 2), ('le', 2)]")
    assert reported_value_test(agrees, reported_values(TASK)) is None  # it expects the bug: no other opinion
    assert reported_value_test("def test_x():\n    assert 1 == 2\n", ["3"]) is None
    # the task states the model's expected value: the model's own test says what is right, and is kept
    assert reported_value_test(MODEL_TEST, reported_values(TASK), TASK + ' It should be [("café", 2)].') is not None
    assert reported_value_test(MODEL_TEST, reported_values(TASK), TASK + ' Not [("caf", 3), ("le", 2)].') is None
    assert reported_value_test("def test_x(:\n", ["3"]) is None
    # the task reports its value for its own input: a call on another input is no report of it
    shapes = "double(2) returns 5, and twice 2 is 4."
    assert reported_value_test("def test_d():\n    assert double(3) == 9\n", ["5"], shapes) is None
    assert "assert double(2) not in (5,)" in (reported_value_test("def test_d():\n    assert double(2) == 7\n",
                                                                   ["5"], shapes) or "")


async def test_the_reported_value_judges_and_the_letter_class_fix_passes_where_the_model_s_value_failed(strict,
                                                                                                       sidebar):
    model = TemperedScript([block("python", MODEL_TEST)])
    engine = engine_for(model, strict, sidebar)
    sink = ListSink()
    await trial_turn(engine, [], TASK, sink, mutate=True)
    kept = sink.of(ReproductionKept)
    assert len(kept) == 1 and kept[0].by == "reported" and "not in ([('caf', 2), ('le', 2)],)" in kept[0].code
    said = [n.text for n in sink.of(Notice)]
    assert any("the model's call gives [('caf', 2), ('le', 2)], which the task reports" in t for t in said), said
    assert r"_WORD = re.compile(r'[^\W\d_]+')" in (sidebar / "textstats.py").read_text().replace('"', "'")
    # it asserts only that the reported result is gone: the fix is kept, never called verified
    assert engine.last.outcome == "unverified" and not engine.last.verified and len(model.sent) == 1


async def test_when_the_model_s_call_does_not_give_the_reported_value_its_own_test_is_tried(strict, sidebar):
    other = MODEL_TEST.replace("top_words(text, 2)", "top_words(text, 1)")  # [('caf', 2)]: not what was reported
    model = TemperedScript([block("python", other)])
    engine = engine_for(model, strict, sidebar)
    sink = ListSink()
    await trial_turn(engine, [], TASK, sink, mutate=True)
    said = [n.text for n in sink.of(Notice)]
    assert any(t.startswith("the model's call, asserted not to give what the task reports, is no reproduction")
               for t in said), said
    kept = sink.of(ReproductionKept)
    assert len(kept) == 1 and kept[0].by == "model" and kept[0].code == other


ROMAN_TASK = "to_roman(9) returns 'VIV' instead of 'IX', and 19 gives 'XVIV'. Please fix it."
NINETEEN = "from roman import to_roman\n\n\ndef test_nineteen():\n    assert to_roman(19) == 'XVIV'\n"


def test_a_test_that_asserts_the_reported_value_on_the_task_s_input_asserts_the_bug():
    values = reported_values(ROMAN_TASK)
    assert asserts_reported(NINETEEN, values, ROMAN_TASK) == "'XVIV'"
    assert asserts_reported(NINETEEN.replace("== 'XVIV'", "== 'XIX'"), values, ROMAN_TASK) is None  # the right one
    flipped = NINETEEN.replace("to_roman(19) == 'XVIV'", "'XVIV' == to_roman(19)")
    assert asserts_reported(flipped, values, ROMAN_TASK) == "'XVIV'"
    assert asserts_reported(NINETEEN.replace("19", "29"), values, ROMAN_TASK) is None  # an input the task never writes
    assert asserts_reported("def test_(:\n", values, ROMAN_TASK) is None


async def test_a_second_test_asserting_the_reported_bug_leaves_the_task_s_examples_verdict(strict, tmp_path):
    """The lab's repro-roman-nines (s42): the task's own example judged, the one-token search found the table's
    order, and the model's second test asserted `to_roman(19) == 'XVIV'`, the value the task reports as the bug;
    its failure put the right fix back. Now it is no test, and the task's examples' verdict stands."""
    root = tmp_path / "roman"
    (root / "tests").mkdir(parents=True)
    (root / "roman.py").write_text(ROMAN)
    (root / "tests" / "test_roman.py").write_text("from roman import to_roman\n\n\ndef test_one():\n"
                                                  "    assert to_roman(1) == 'I'\n")
    model = TemperedScript([block("python", NINETEEN)])
    engine = engine_for(model, strict, root)
    sink = ListSink()
    await trial_turn(engine, [], ROMAN_TASK, sink, mutate=True)
    said = [n.text for n in sink.of(Notice)]
    assert any("the second test is no test (it asserts 'XVIV' as the right result, which the task reports" in t
               for t in said), said
    assert engine.last.outcome == "verified", said
    assert run_pytest(root, "test_nineteen.py", NINETEEN.replace("'XVIV'", "'XIX'")).returncode == 0
