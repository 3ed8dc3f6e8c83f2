"""A customer's cart: which SKUs, how many of each, and the coupon codes entered at checkout."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

from shop.pricing import cart_total


class Cart:
    """One customer's cart. ``lines`` maps SKU to quantity; a cart can start pre-filled (a saved cart)."""

    def __init__(self, owner: str, lines: dict[str, int] = {}, coupons: list[str] | None = None) -> None:
        self.owner = owner
        self.lines = lines
        self.coupons = coupons if coupons is not None else []

    def add(self, sku: str, qty: int = 1) -> None:
        """Put ``qty`` more of ``sku`` in the cart."""
        if qty < 1:
            raise ValueError(f"quantity must be at least 1, got {qty}")
        self.lines[sku] = self.lines.get(sku, 0) + qty

    def remove(self, sku: str, qty: int | None = None) -> None:
        """Take ``qty`` of ``sku`` out (all of it when ``qty`` is None); removing what is not there is a no-op."""
        if sku not in self.lines:
            return
        left = 0 if qty is None else self.lines[sku] - qty
        if left > 0:
            self.lines[sku] = left
        else:
            del self.lines[sku]

    def apply_coupon(self, code: str) -> None:
        """Remember a coupon code; pricing decides whether it is valid."""
        if code not in self.coupons:
            self.coupons.append(code)

    def item_count(self) -> int:
        """How many items in all (3 tea and 2 mugs are 5 items)."""
        return sum(self.lines.values())

    def total(self, prices: Mapping[str, Decimal]) -> Decimal:
        """What the customer pays for this cart at ``prices``."""
        return cart_total(self.lines, prices, self.coupons)
