"""The address block at the top of an invoice."""

from __future__ import annotations

import addresses


def invoice_header(customer: addresses.Address, invoice_no: str) -> str:
    return f"Invoice {invoice_no}\n\nBill to:\n{addresses.format_address(customer)}"
