from decimal import Decimal

from invoices import Invoice


def make():
    invoice = Invoice("2024-031", "Acme")
    invoice.add("Consulting", "7.5", "120.00")
    invoice.add("Travel", 1, "86.40")
    return invoice


def test_sum_lines():
    assert make().subtotal() == Decimal("986.40")


def test_vat_and_total():
    invoice = make()
    assert invoice.vat() == Decimal("197.28")
    assert invoice.total() == Decimal("1183.68")


def test_empty_invoice():
    assert Invoice("x", "y").subtotal() == Decimal("0.00")
