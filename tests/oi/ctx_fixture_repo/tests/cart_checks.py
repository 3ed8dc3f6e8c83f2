from shop.cart import Cart, apply_discount


def test_total_with_discount():
    cart = Cart()
    cart.add_item("tea", 3.0, 2)
    assert apply_discount(cart, 1.0) == 5.0


def test_total_empty():
    assert Cart().total() == 0
