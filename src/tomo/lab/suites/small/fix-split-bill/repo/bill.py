"""Who owes what for a shared bill, tip included."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal

from money import CENT, split_evenly, to_money


def with_tip(amount: Decimal, tip_percent: int) -> Decimal:
    """``amount`` plus a ``tip_percent`` tip, rounded to the cent."""
    return (amount * (100 + tip_percent) / 100).quantize(CENT, rounding=ROUND_HALF_UP)


def shares(total: str, names: Sequence[str], tip_percent: int = 0) -> dict[str, Decimal]:
    """Each person's share of ``total`` plus tip; earlier names pay the odd cents."""
    if len(set(names)) != len(names):
        raise ValueError("each name may appear only once")
    amounts = split_evenly(with_tip(to_money(total), tip_percent), len(names))
    return dict(zip(names, amounts, strict=True))
