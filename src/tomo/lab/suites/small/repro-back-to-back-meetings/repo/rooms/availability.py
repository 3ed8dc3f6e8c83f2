"""What the booking page says about a room's day."""

from __future__ import annotations

from collections.abc import Iterable

from rooms.busy import Interval, hhmm, merge_busy

DAY_START = 8 * 60
DAY_END = 18 * 60


def free_slots(busy: Iterable[Interval], min_length: int = 30,
               day_start: int = DAY_START, day_end: int = DAY_END) -> list[Interval]:
    """The gaps of at least ``min_length`` minutes between busy intervals, within the working day."""
    slots: list[Interval] = []
    cursor = day_start
    for start, end in merge_busy(busy):
        if start > cursor:
            slots.append((cursor, min(start, day_end)))
        cursor = max(cursor, end)
    if cursor < day_end:
        slots.append((cursor, day_end))
    return [(s, e) for s, e in slots if e - s >= min_length]


def day_summary(busy: Iterable[Interval]) -> str:
    """'busy 09:00-11:00, 14:00-15:00' (each busy block once), or 'free all day'."""
    blocks = merge_busy(busy)
    if not blocks:
        return "free all day"
    return "busy " + ", ".join(f"{hhmm(s)}-{hhmm(e)}" for s, e in blocks)
