"""Prices and coupons, in Decimal so that totals are exact to the cent."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")
COUPONS = {"SAVE10": Decimal("0.10"), "STAFF": Decimal("0.25")}


def cart_total(lines: Mapping[str, int], prices: Mapping[str, Decimal], coupons: Iterable[str] = ()) -> Decimal:
    """Sum of quantity x unit price, less the best single coupon (coupons do not stack), rounded to the cent.

    An unknown SKU raises KeyError naming it; an unknown coupon code is ignored, as the shop front does.
    """
    subtotal = Decimal(0)
    for sku, qty in lines.items():
        if sku not in prices:
            raise KeyError(f"no price for SKU {sku!r}")
        subtotal += prices[sku] * qty
    best = max((COUPONS[c] for c in coupons if c in COUPONS), default=Decimal(0))
    return (subtotal * (1 - best)).quantize(CENT, rounding=ROUND_HALF_UP)
