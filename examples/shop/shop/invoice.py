from dataclasses import dataclass
from decimal import Decimal

from shop.orders import Order

VAT = Decimal("0.20")


@dataclass
class Invoice:
    order: Order

    def total(self) -> Decimal:
        return self.order.total() * (1 + VAT)


def describe(item) -> str:
    """Formats anything with a total: an invoice, an order or a line."""
    return f"{type(item).__name__}: {item.total():.2f}"
