from decimal import Decimal

import pytest

from shop import Cart, cart_total

PRICES = {"TEA": Decimal("4.50"), "MUG": Decimal("9.99")}


def test_add_and_count():
    cart = Cart("ann", {"TEA": 1})
    cart.add("TEA", 2)
    cart.add("MUG")
    assert cart.item_count() == 4


def test_add_refuses_zero():
    with pytest.raises(ValueError):
        Cart("ann", {}).add("TEA", 0)


def test_remove_some_and_all():
    cart = Cart("ann", {"TEA": 3, "MUG": 1})
    cart.remove("TEA", 2)
    cart.remove("MUG")
    cart.remove("CAKE")
    assert cart.lines == {"TEA": 1}


def test_new_cart_is_empty():
    assert Cart("bob").item_count() == 0


def test_total_with_best_coupon():
    cart = Cart("ann", {"TEA": 2, "MUG": 1})
    cart.apply_coupon("SAVE10")
    cart.apply_coupon("STAFF")
    cart.apply_coupon("BOGUS")
    assert cart.total(PRICES) == Decimal("14.24")


def test_unknown_sku_is_named():
    with pytest.raises(KeyError, match="CAKE"):
        cart_total({"CAKE": 1}, PRICES)
