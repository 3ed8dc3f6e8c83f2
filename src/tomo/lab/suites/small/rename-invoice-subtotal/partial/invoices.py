"""Invoices for the consulting practice: lines of hours or items, VAT on top."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")


@dataclass
class InvoiceLine:
    description: str
    quantity: Decimal
    unit_price: Decimal

    @property
    def amount(self) -> Decimal:
        return (self.quantity * self.unit_price).quantize(CENT, rounding=ROUND_HALF_UP)


@dataclass
class Invoice:
    number: str
    client: str
    vat_rate: Decimal = Decimal("0.20")
    lines: list[InvoiceLine] = field(default_factory=list)

    def add(self, description: str, quantity: str | int, unit_price: str) -> None:
        """Add a line; quantities and prices are given as text so no float ever touches them."""
        self.lines.append(InvoiceLine(description, Decimal(quantity), Decimal(unit_price)))

    def subtotal(self) -> Decimal:
        """The total of the lines before VAT."""
        return sum((line.amount for line in self.lines), Decimal("0.00"))

    def vat(self) -> Decimal:
        return (self.subtotal() * self.vat_rate).quantize(CENT, rounding=ROUND_HALF_UP)

    def total(self) -> Decimal:
        """What the client pays: lines plus VAT."""
        return self.subtotal() + self.vat()
