"""Weekly pay from the timesheet."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal

from timesheets.shifts import format_hours, weekly_minutes


def weekly_pay(shifts: Iterable[tuple[str, str]], hourly_rate: Decimal) -> Decimal:
    """Pay for a week of shifts at ``hourly_rate``, to the cent."""
    hours = Decimal(weekly_minutes(shifts)) / 60
    return (hours * hourly_rate).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def payslip_line(name: str, shifts: list[tuple[str, str]], hourly_rate: Decimal) -> str:
    """'Dana: 38h30m, 577.50'."""
    return f"{name}: {format_hours(weekly_minutes(shifts))}, {weekly_pay(shifts, hourly_rate)}"
