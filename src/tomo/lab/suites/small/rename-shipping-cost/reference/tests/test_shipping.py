from decimal import Decimal

import pytest

from store.shipping import shipping_cost


def test_first_kilogram():
    assert shipping_cost(Decimal("0.4"), "domestic") == Decimal("4.90")


def test_started_kilograms_count():
    assert shipping_cost(Decimal("2.1"), "eu") == Decimal("13.70")


def test_free_domestic_shipping():
    assert shipping_cost(Decimal("5"), "domestic", order_value=Decimal("60.00")) == Decimal("0.00")
    assert shipping_cost(Decimal("5"), "world", order_value=Decimal("600")) == Decimal("37.00")


def test_unknown_zone():
    with pytest.raises(ValueError, match="moon"):
        shipping_cost(Decimal("1"), "moon")
