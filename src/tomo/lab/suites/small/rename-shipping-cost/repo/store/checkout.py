"""The checkout summary: goods, shipping and the amount to pay."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from store.shipping import calc_ship


@dataclass(frozen=True)
class Line:
    sku: str
    unit_price: Decimal
    qty: int
    weight_kg: Decimal


@dataclass(frozen=True)
class Summary:
    goods: Decimal
    shipping: Decimal

    @property
    def total(self) -> Decimal:
        return self.goods + self.shipping


def summarize(lines: list[Line], zone: str) -> Summary:
    """Price a basket: goods at their unit prices, shipped together as one parcel."""
    if not lines:
        raise ValueError("an empty basket cannot be checked out")
    goods = sum((line.unit_price * line.qty for line in lines), Decimal(0))
    weight = sum((line.weight_kg * line.qty for line in lines), Decimal(0))
    return Summary(goods=goods, shipping=calc_ship(weight, zone, order_value=goods))
