"""Stock levels per SKU, changed only through receipts and shipments."""

from __future__ import annotations


class OutOfStock(Exception):
    """A shipment asked for more than is on hand."""


class Inventory:
    """Quantities on hand by SKU. A SKU that was received once stays known, even at zero."""

    def __init__(self) -> None:
        self._on_hand: dict[str, int] = {}

    def receive(self, sku: str, qty: int) -> None:
        """Goods arrived: add ``qty`` (positive) of ``sku``."""
        if qty <= 0:
            raise ValueError(f"received quantity must be positive, got {qty}")
        self._on_hand[sku] = self._on_hand.get(sku, 0) + qty

    def ship(self, sku: str, qty: int) -> None:
        """Goods left: take ``qty`` of ``sku`` out, refusing to go below zero."""
        have = self._on_hand.get(sku, 0)
        if qty > have:
            raise OutOfStock(f"cannot ship {qty} x {sku}: only {have} on hand")
        self._on_hand[sku] = have - qty

    def quantity(self, sku: str) -> int:
        return self._on_hand.get(sku, 0)

    def skus(self) -> list[str]:
        """Every known SKU, sorted."""
        return sorted(self._on_hand)

    def low_stock(self, threshold: int = 5) -> list[str]:
        """The SKUs with fewer than ``threshold`` on hand, sorted."""
        return [sku for sku in self.skus() if self._on_hand[sku] < threshold]
