from decimal import Decimal

import pytest

from bill import shares, with_tip
from money import split_evenly, to_money


def test_to_money_rounds_to_cents():
    assert to_money(" 3.999 ") == Decimal("4.00")
    assert to_money(7) == Decimal("7.00")


@pytest.mark.parametrize("bad", ["abc", "-1"])
def test_to_money_refuses(bad):
    with pytest.raises(ValueError):
        to_money(bad)


def test_even_split():
    assert split_evenly(Decimal("90.00"), 3) == [Decimal("30.00")] * 3


def test_split_needs_people():
    with pytest.raises(ValueError):
        split_evenly(Decimal("1.00"), 0)


def test_tip():
    assert with_tip(Decimal("50.00"), 10) == Decimal("55.00")


def test_shares_by_name():
    assert shares("40", ["ann", "bob"], tip_percent=0) == {"ann": Decimal("20.00"), "bob": Decimal("20.00")}
