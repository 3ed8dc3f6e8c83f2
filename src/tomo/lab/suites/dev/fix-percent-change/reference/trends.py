"""Week-over-week figures for the analytics dashboard."""

from __future__ import annotations


def percent_change(old: float, new: float) -> float:
    """How much ``new`` differs from ``old``, in percent of ``old``, to one decimal."""
    if old == 0:
        raise ValueError("no change can be measured from zero")
    difference = new - old
    return round(difference / old * 100, 1)


def trend_label(old: float, new: float) -> str:
    """'up 12.5%', 'down 3.0%' or 'flat', as the dashboard's cards show it."""
    change = percent_change(old, new)
    if change > 0:
        return f"up {change}%"
    if change < 0:
        return f"down {-change}%"
    return "flat"
