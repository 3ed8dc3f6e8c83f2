from decimal import Decimal

import store.checkout
import store.shipping
from store.checkout import Line, summarize
from store.shipping import shipping_cost


def test_new_name_works():
    assert shipping_cost(Decimal("2.1"), "eu") == Decimal("13.70")
    assert shipping_cost(Decimal("1"), "domestic", order_value=Decimal("75")) == Decimal("0.00")


def test_checkout_uses_it():
    summary = summarize([Line("MAP", Decimal("8.00"), 1, Decimal("3.5"))], "world")
    assert summary.shipping == Decimal("32.25")


def test_old_name_is_gone():
    assert not hasattr(store.shipping, "calc_ship")
    assert not hasattr(store.checkout, "calc_ship")
