"""Parts that must add up to the whole (`tomo.oi.adds_up`): the task's words, the test tomo writes from a model's
call whose expected parts do not add up, run by real pytest, and a trial turn on the lab's `fix-split-bill` whose
one-token search then finds the fix in the real sandbox, judged by the task's hidden tests.

Qwen 1.5B's reproduction asserted `split_evenly(Decimal("100.00"), 3) == [Decimal("33.34")] * 3`: 100.02, which
the right fix fails too.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import tomo
from oi.oi_support import hidden_tests, run_pytest
from oi.test_honest_outcomes import TemperedScript
from oi.test_trials import block, engine_for
from tomo.events import ListSink, Notice, ReproductionKept
from tomo.oi.adds_up import adds_up_test, says_adds_up
from tomo.oi.trials import trial_turn

TASK_DIR = Path(tomo.__file__).parent / "lab" / "suites" / "small" / "fix-split-bill"
TASK = ("When we split a 100.00 bill between 3 people everybody is told to pay 33.33, so the group is short by one "
        "cent.\nThe shares should always add up to the bill. Please fix this.")
MODEL_TEST = '''\
from decimal import Decimal
from money import split_evenly


def test_the_problem():
    assert split_evenly(Decimal("100.00"), 3) == [Decimal("33.34")] * 3, "The shares should add up to the bill."
'''


@pytest.fixture
def bill(tmp_path: Path) -> Path:
    root = tmp_path / "bill"
    shutil.copytree(TASK_DIR / "repo", root)
    return root


def test_the_task_s_words_say_the_parts_add_up_to_a_whole() -> None:
    assert says_adds_up(TASK)
    assert says_adds_up("The line totals must sum to the invoice total.")
    assert not says_adds_up("Everybody is told to pay 33.33. Please fix the rounding.")


def test_expected_parts_that_do_not_add_up_become_a_test_of_the_sum(bill: Path) -> None:
    test = adds_up_test(MODEL_TEST)
    assert test is not None and test.startswith("from decimal import Decimal\nfrom money import split_evenly\n")
    assert '    whole = Decimal("100.00")\n    parts = split_evenly(Decimal("100.00"), 3)\n' in test
    failed = run_pytest(bill, "test_sum.py", test)
    assert failed.returncode == 1 and "add up to 99.99, not to 100.00" in failed.stdout
    shutil.copy(TASK_DIR / "reference" / "money.py", bill / "money.py")
    assert run_pytest(bill, "test_sum.py", test).returncode == 0


def test_parts_that_add_up_but_are_more_than_the_count_the_call_passes_become_a_test_of_the_sum(bill: Path) -> None:
    # s44: four shares for three people, adding up to the bill
    code = MODEL_TEST.replace('split_evenly(Decimal("100.00"), 3) == [Decimal("33.34")] * 3',
                              'split_evenly(Decimal("90.01"), 3) == [Decimal("30.00")] * 3 + [Decimal("0.01")]')
    test = adds_up_test(code)
    assert test is not None and '    whole = Decimal("90.01")\n    parts = split_evenly(Decimal("90.01"), 3)\n' in test
    assert run_pytest(bill, "test_sum.py", test).returncode == 1
    shutil.copy(TASK_DIR / "reference" / "money.py", bill / "money.py")
    assert run_pytest(bill, "test_sum.py", test).returncode == 0
    as_many = code.replace('[Decimal("30.00")] * 3 + [Decimal("0.01")]',
                           '[Decimal("30.01")] + [Decimal("30.00")] * 2')  # three shares that add up: the model's own
    assert adds_up_test(as_many) is None


@pytest.mark.parametrize("code", [
    MODEL_TEST.replace('[Decimal("33.34")] * 3', '[Decimal("33.34"), Decimal("33.33"), Decimal("33.33")]'),  # adds up
    MODEL_TEST.replace('split_evenly(Decimal("100.00"), 3)', "split_evenly(total, 3)"),  # no number for the whole
    MODEL_TEST.replace('[Decimal("33.34")] * 3', '{"ann": Decimal("33.34")}'),  # not a list of parts
    "def test_(:\n",
])
def test_parts_that_add_up_or_no_whole_to_compare_with_leave_the_model_s_test(code: str) -> None:
    assert adds_up_test(code) is None


def test_a_call_bound_to_a_name_first_is_followed() -> None:
    code = MODEL_TEST.replace('    assert split_evenly(Decimal("100.00"), 3) ==',
                              '    parts = split_evenly(Decimal("100.00"), 3)\n    assert parts ==')
    test = adds_up_test(code)
    assert test is not None and '    parts = split_evenly(Decimal("100.00"), 3)\n' in test


async def test_the_sum_judges_the_trials_and_the_search_finds_the_fix(strict, bill):
    model = TemperedScript([block("python", MODEL_TEST)])
    engine = engine_for(model, strict, bill)
    sink = ListSink()
    await trial_turn(engine, [], TASK, sink, mutate=True)
    kept = sink.of(ReproductionKept)
    assert len(kept) == 1 and kept[0].by == "model" and "assert sum(parts) == whole" in kept[0].code
    said = [n.text for n in sink.of(Notice)]
    assert any("the model expected parts that do not" in t for t in said), said
    # the arguments are the model's: a fix found against such a test alone is never called verified
    assert engine.last.outcome == "unverified" and len(model.sent) == 1
    hidden = hidden_tests(bill, TASK_DIR, "tests/test_hidden_split.py")
    assert hidden.returncode == 0, hidden.stdout
