"""A room's day: its meetings and how much of the day they book."""

from __future__ import annotations

from clock import meeting_minutes


def booked_minutes(meetings: list[tuple[str, str]]) -> int:
    """The minutes the ``(start, end)`` meetings book in all."""
    return sum(meeting_minutes(start, end) for start, end in meetings)


def summary(meetings: list[tuple[str, str]]) -> str:
    """'3 meetings, 2h 15m booked'."""
    total = booked_minutes(meetings)
    count = len(meetings)
    return f"{count} meeting{'s' if count != 1 else ''}, {total // 60}h {total % 60:02d}m booked"
