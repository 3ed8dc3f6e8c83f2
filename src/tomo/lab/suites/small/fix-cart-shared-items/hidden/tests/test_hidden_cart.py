from decimal import Decimal

from shop import Cart


def test_carts_do_not_share_items():
    ann = Cart("ann")
    bob = Cart("bob")
    ann.add("TEA", 2)
    assert bob.item_count() == 0
    assert bob.lines == {}
    bob.add("MUG")
    assert ann.lines == {"TEA": 2}


def test_many_new_carts_start_empty():
    for n in range(5):
        cart = Cart(f"customer-{n}")
        assert cart.item_count() == 0
        cart.add("TEA")


def test_coupons_not_shared_either():
    ann, bob = Cart("ann"), Cart("bob")
    ann.apply_coupon("SAVE10")
    assert bob.coupons == []


def test_prefilled_cart_still_works():
    cart = Cart("ann", {"TEA": 1})
    cart.add("TEA")
    assert cart.total({"TEA": Decimal("4.50")}) == Decimal("9.00")
