"""Business-day arithmetic for invoice due dates.

Weekends are Saturday and Sunday. Holidays come from the office calendar, which the caller passes in, so nothing
here reads the clock and every function is a pure function of its arguments.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, timedelta

SATURDAY = 5  # date.weekday(): Monday is 0, Sunday is 6


def is_business_day(day: date, holidays: Iterable[date] = ()) -> bool:
    """True if ``day`` is a weekday that is not one of ``holidays``."""
    return day.weekday() < SATURDAY and day not in set(holidays)


def add_business_days(start: date, days: int, holidays: Iterable[date] = ()) -> date:
    """The date ``days`` business days after ``start``.

    ``start`` itself never counts, so one business day after a Friday is the next Monday, and zero days is
    ``start`` unchanged (even on a weekend). Due dates only move forward: negative ``days`` are refused.
    """
    if days < 0:
        raise ValueError(f"days must be >= 0, got {days}")
    off = set(holidays)
    current = start
    remaining = days
    while remaining:
        current += timedelta(days=1)
        if current.weekday() > SATURDAY or current in off:
            continue
        remaining -= 1
    return current


def business_days_between(start: date, end: date, holidays: Iterable[date] = ()) -> int:
    """How many business days lie after ``start`` up to and including ``end`` (0 if ``end`` is not later)."""
    off = set(holidays)
    count = 0
    current = start
    while current < end:
        current += timedelta(days=1)
        if is_business_day(current, off):
            count += 1
    return count


def due_date(issued: date, terms_days: int = 10, holidays: Iterable[date] = ()) -> date:
    """When an invoice issued on ``issued`` falls due under net-``terms_days`` business-day terms."""
    return add_business_days(issued, terms_days, holidays)
