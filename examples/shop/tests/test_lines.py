from decimal import Decimal

from shop.lines import OrderLine


def test_line_total(line):
    assert line.total() == Decimal("6.00")


def test_discount_applies(pen):
    discounted = OrderLine(pen, 10, discount=Decimal("0.1"))
    assert discounted.total() == Decimal("13.50")
