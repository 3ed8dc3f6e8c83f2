"""State shared between objects (`tomo.oi.shared_default`): the task's words, the test tomo writes from a model's
call that passed, run by real pytest, and a trial turn whose one-token search then finds the fix, in the real sandbox.

The project is the lab's `fix-cart-shared-items`: `Cart.__init__` stores a `lines={}` default on the cart, so every
cart created empty shares one dict. Qwen 1.5B's three tests built one cart and counted its own items: all passed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from oi.oi_support import run_pytest
from oi.test_honest_outcomes import TemperedScript
from oi.test_trials import block, engine_for
from tomo.events import ListSink, Notice, ReproductionKept
from tomo.oi.shared_default import says_shared, shared_default_test
from tomo.oi.trials import trial_turn

CART = '''\
class Cart:
    """One customer's cart."""

    def __init__(self, owner, lines={}, *, coupons=[]):
        self.owner = owner
        self.lines = lines
        self.coupons = list(coupons)

    def add(self, sku, qty=1):
        self.lines[sku] = self.lines.get(sku, 0) + qty

    def count(self):
        return sum(self.lines.values())
'''
TASK = ("Customers are reporting items in their cart that they never added; it only happens to carts created "
        "empty. Please find the cause and fix it.")
MODEL_TEST = '''\
from shop import Cart


def test_the_problem():
    cart = Cart("bob")
    cart.add("tea", 3)
    assert cart.count() == 3
'''


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    (root / "tests").mkdir(parents=True)
    (root / "shop.py").write_text(CART)
    (root / "conftest.py").write_text("")
    (root / "tests" / "test_shop.py").write_text(
        "from shop import Cart\n\n\ndef test_saved():\n    assert Cart('ann', {'mug': 2}).count() == 2\n")
    return root


def test_the_task_s_words_say_whether_one_object_gets_another_s_state():
    assert says_shared(TASK)
    assert says_shared("It looks like they get someone else's items.")
    assert says_shared("The settings leak into the next session.")
    assert not says_shared("Customers are charged twice for one mug. Please fix it.")


def test_the_model_s_call_made_twice_fails_on_the_shared_default_and_passes_when_each_builds_its_own(shop):
    test = shared_default_test(MODEL_TEST, {"shop.py": CART})
    assert test is not None and "first = Cart('bob')\n    second = Cart('bob')" in test
    assert "assert first.lines is not second.lines" in test and "coupons" not in test  # coupons are copied
    failed = run_pytest(shop, "test_shared.py", test)
    assert failed.returncode == 1 and "share one lines" in failed.stdout
    (shop / "shop.py").write_text(CART.replace("lines={}", "lines=None").replace(
        "self.lines = lines", "self.lines = lines\n        if lines is None:\n            self.lines = {}"))
    assert run_pytest(shop, "test_shared.py", test).returncode == 0


def test_a_call_that_passes_its_own_value_or_arguments_tomo_cannot_copy_is_no_such_test():
    assert shared_default_test(MODEL_TEST.replace('Cart("bob")', 'Cart("bob", {})'), {"shop.py": CART}) is None
    assert shared_default_test(MODEL_TEST.replace('Cart("bob")', 'Cart("bob", lines={})'), {"shop.py": CART}) is None
    assert shared_default_test(MODEL_TEST.replace('Cart("bob")', "Cart(name)"), {"shop.py": CART}) is None
    assert shared_default_test(MODEL_TEST, {"shop.py": CART.replace("self.lines = lines", "self.lines = {}")}) \
        is None  # nothing stored as it is given


async def test_a_passing_model_test_becomes_the_shared_default_test_and_the_search_finds_the_fix(strict, shop):
    model = TemperedScript([block("python", MODEL_TEST)])
    engine = engine_for(model, strict, shop)
    sink = ListSink()
    await trial_turn(engine, [], TASK, sink, mutate=True)
    kept = sink.of(ReproductionKept)
    assert len(kept) == 1 and kept[0].by == "model" and "first.lines is not second.lines" in kept[0].code
    said = [n.text for n in sink.of(Notice)]
    assert any("the model's test passed, but the task reads as state one object gets from another" in t
               for t in said), said
    assert "if lines is None:" in (shop / "shop.py").read_text()
    # the arguments are the model's: a fix found by search against such a test is never called verified
    assert engine.last.outcome == "unverified" and len(model.sent) == 1
    assert any("a test tomo built on the model's call (that two objects made alike share nothing)" in t
               for t in said), said
