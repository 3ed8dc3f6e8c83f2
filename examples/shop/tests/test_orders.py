from decimal import Decimal

from shop.invoice import Invoice, describe
from shop.report import discounted_total, largest_line


def test_order_total(order):
    assert order.total() == Decimal("15.00")


def test_largest_line(order):
    assert largest_line(order).product.name == "book"


def test_discounted_total(line):
    assert discounted_total(line, Decimal("0.5")) == Decimal("3.00")


def test_invoice_adds_vat(order):
    invoice = Invoice(order)
    assert invoice.total() == Decimal("18.00")
    assert describe(invoice) == "Invoice: 18.00"
