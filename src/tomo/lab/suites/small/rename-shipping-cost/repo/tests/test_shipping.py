from decimal import Decimal

import pytest

from store.shipping import calc_ship


def test_first_kilogram():
    assert calc_ship(Decimal("0.4"), "domestic") == Decimal("4.90")


def test_started_kilograms_count():
    assert calc_ship(Decimal("2.1"), "eu") == Decimal("13.70")


def test_free_domestic_shipping():
    assert calc_ship(Decimal("5"), "domestic", order_value=Decimal("60.00")) == Decimal("0.00")
    assert calc_ship(Decimal("5"), "world", order_value=Decimal("600")) == Decimal("37.00")


def test_unknown_zone():
    with pytest.raises(ValueError, match="moon"):
        calc_ship(Decimal("1"), "moon")
