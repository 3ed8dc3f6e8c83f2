"""Monthly net pay shown on the payslip."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from tax import CENT, income_tax


def monthly_net(annual_gross: Decimal) -> Decimal:
    """Gross minus income tax, spread over 12 months, to the cent."""
    return ((annual_gross - income_tax(annual_gross)) / 12).quantize(CENT, rounding=ROUND_HALF_UP)


def effective_rate(annual_gross: Decimal) -> Decimal:
    """Tax as a share of gross, as a percentage with one decimal (0 for no income)."""
    if annual_gross == 0:
        return Decimal("0.0")
    return (income_tax(annual_gross) * 100 / annual_gross).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)
