"""Money helpers for the bill-splitting app. Amounts are Decimal, always in whole cents."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

CENT = Decimal("0.01")


def to_money(value: str | int | Decimal) -> Decimal:
    """Parse what a user typed ('12.5', ' 7 ', '3.999') into an amount rounded to the cent."""
    try:
        amount = Decimal(str(value).strip())
    except InvalidOperation:
        raise ValueError(f"not an amount: {value!r}") from None
    if amount < 0:
        raise ValueError(f"amounts cannot be negative: {value!r}")
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


def split_evenly(total: Decimal, people: int) -> list[Decimal]:
    """Split ``total`` into ``people`` shares that add up to exactly ``total``.

    Shares differ by at most one cent and the first people in the list carry the extra cents:
    100.00 between 3 is [33.34, 33.33, 33.33].
    """
    if people < 1:
        raise ValueError(f"need at least one person, got {people}")
    cents = int(total.quantize(CENT) / CENT)
    base, extra = divmod(cents, people)
    return [Decimal(base + (1 if i < extra else 0)) * CENT for i in range(people)]
