"""Progressive income tax: each bracket's rate applies only to the part of the income inside that bracket."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")

# (lower bound, upper bound or None for no limit, rate), in order
BRACKETS: list[tuple[Decimal, Decimal | None, Decimal]] = [
    (Decimal("0"), Decimal("10000"), Decimal("0")),
    (Decimal("10000"), Decimal("40000"), Decimal("0.20")),
    (Decimal("40000"), Decimal("120000"), Decimal("0.40")),
    (Decimal("120000"), None, Decimal("0.45")),
]


def income_tax(income: Decimal) -> Decimal:
    """Tax on a year's taxable ``income``, rounded to the cent."""
    if income < 0:
        raise ValueError(f"income cannot be negative: {income}")
    tax = Decimal(0)
    for lower, upper, rate in BRACKETS:
        if income <= lower:
            break
        taxable = income - lower
        tax += taxable * rate
    return tax.quantize(CENT, rounding=ROUND_HALF_UP)


def marginal_rate(income: Decimal) -> Decimal:
    """The rate that applies to the next unit of income."""
    for lower, upper, rate in BRACKETS:
        if upper is None or income < upper:
            return rate
    raise AssertionError("the last bracket has no upper bound")
