from inventory.report import render_report
from inventory.stock import Inventory


def make():
    inv = Inventory()
    for sku, qty in (("D-4", 5), ("B-2", 12), ("A-1", 4), ("C-3", 1)):
        inv.receive(sku, qty)
    inv.ship("C-3", 1)
    return inv


def test_low_stock_default_threshold():
    assert make().low_stock() == ["A-1", "C-3"]


def test_low_stock_threshold_is_strict():
    assert make().low_stock(threshold=5) == ["A-1", "C-3"]
    assert make().low_stock(6) == ["A-1", "C-3", "D-4"]
    assert make().low_stock(threshold=0) == []


def test_empty_inventory():
    assert Inventory().low_stock() == []
    assert render_report(Inventory()).splitlines() == ["Stock report", "Low stock: none"]


def test_report_ends_with_low_stock_line():
    lines = render_report(make()).splitlines()
    assert lines == [
        "Stock report",
        "A-1            4",
        "B-2           12",
        "C-3            0",
        "D-4            5",
        "Low stock: A-1, C-3",
    ]


def test_report_threshold():
    assert render_report(make(), low_stock_threshold=13).splitlines()[-1] == "Low stock: A-1, B-2, C-3, D-4"
    assert render_report(make(), low_stock_threshold=1).splitlines()[-1] == "Low stock: C-3"
    assert render_report(make(), 0).splitlines()[-1] == "Low stock: none"
