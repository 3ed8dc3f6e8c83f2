from invoices import Invoice
from statements import statement


def test_statement_only_lists_the_client():
    a = Invoice("A-1", "Acme")
    a.add("Audit", 2, "100")
    b = Invoice("B-1", "Other")
    b.add("Audit", 1, "100")
    lines = statement("Acme", [a, b]).splitlines()
    assert lines == ["A-1           200.00    240.00", "TOTAL         200.00    240.00"]
