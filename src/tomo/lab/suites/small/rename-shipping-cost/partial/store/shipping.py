"""Shipping charges by parcel weight and destination zone."""

from __future__ import annotations

from decimal import ROUND_UP, Decimal

# zone -> (first kilogram, each further started kilogram)
RATES = {
    "domestic": (Decimal("4.90"), Decimal("1.20")),
    "eu": (Decimal("9.50"), Decimal("2.10")),
    "world": (Decimal("18.00"), Decimal("4.75")),
}
FREE_SHIPPING_FROM = Decimal("60.00")  # domestic orders at or above this value ship free


def shipping_cost(weight_kg: Decimal, zone: str, order_value: Decimal = Decimal(0)) -> Decimal:
    """The shipping charge for a parcel of ``weight_kg`` to ``zone``; every started kilogram counts."""
    if zone not in RATES:
        raise ValueError(f"unknown shipping zone {zone!r}; expected one of {', '.join(RATES)}")
    if weight_kg <= 0:
        raise ValueError(f"weight must be positive, got {weight_kg}")
    if zone == "domestic" and order_value >= FREE_SHIPPING_FROM:
        return Decimal("0.00")
    first, further = RATES[zone]
    extra_kg = max(0, int((weight_kg - 1).to_integral_value(rounding=ROUND_UP)))
    return first + further * extra_kg
