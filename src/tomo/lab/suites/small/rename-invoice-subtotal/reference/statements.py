"""Monthly client statements: every invoice of the month on one page."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from invoices import Invoice


def statement(client: str, invoices: Iterable[Invoice]) -> str:
    """One line per invoice of ``client`` (number, net, total), then the month's totals."""
    rows = []
    net = gross = Decimal("0.00")
    for invoice in invoices:
        if invoice.client != client:
            continue
        rows.append(f"{invoice.number:<10}{invoice.subtotal():>10}{invoice.total():>10}")
        net += invoice.subtotal()
        gross += invoice.total()
    rows.append(f"{'TOTAL':<10}{net:>10}{gross:>10}")
    return "\n".join(rows)
