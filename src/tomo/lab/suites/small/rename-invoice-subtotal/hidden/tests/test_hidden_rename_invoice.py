from decimal import Decimal

from invoices import Invoice
from statements import statement


def test_subtotal_method():
    invoice = Invoice("9", "Zed", vat_rate=Decimal("0.10"))
    invoice.add("Design", 3, "50.00")
    assert invoice.subtotal() == Decimal("150.00")
    assert invoice.total() == Decimal("165.00")


def test_statement_still_works():
    invoice = Invoice("9", "Zed")
    invoice.add("Design", 1, "10")
    assert statement("Zed", [invoice]).splitlines()[-1] == "TOTAL          10.00     12.00"


def test_old_name_is_gone():
    assert not hasattr(Invoice, "sum_lines")
