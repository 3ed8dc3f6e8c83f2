import pytest

from inventory.report import render_report
from inventory.stock import Inventory, OutOfStock


@pytest.fixture
def stock():
    inv = Inventory()
    inv.receive("B-200", 12)
    inv.receive("A-100", 3)
    inv.receive("C-300", 7)
    inv.ship("C-300", 7)
    return inv


def test_quantities(stock):
    assert [stock.quantity(s) for s in ("A-100", "B-200", "C-300", "Z-999")] == [3, 12, 0, 0]


def test_cannot_oversell(stock):
    with pytest.raises(OutOfStock, match="only 3 on hand"):
        stock.ship("A-100", 4)


def test_receive_positive_only(stock):
    with pytest.raises(ValueError):
        stock.receive("A-100", 0)


def test_report(stock):
    assert render_report(stock).splitlines()[:4] == [
        "Stock report",
        "A-100          3",
        "B-200         12",
        "C-300          0",
    ]
