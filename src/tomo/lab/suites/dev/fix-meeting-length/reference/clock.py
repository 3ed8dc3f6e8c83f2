"""Times of day as the calendar stores them: "HH:MM" strings, 24-hour."""

from __future__ import annotations


def minutes_of_day(time: str) -> int:
    """Minutes since midnight of "HH:MM"; ValueError naming the text if it is no time of day."""
    hours, sep, minutes = time.partition(":")
    if not sep or not hours.isdigit() or not minutes.isdigit() or len(minutes) != 2:
        raise ValueError(f"not a time of day: {time!r}")
    if int(hours) > 23 or int(minutes) > 59:
        raise ValueError(f"not a time of day: {time!r}")
    return int(hours) * 60 + int(minutes)


def meeting_minutes(start: str, end: str) -> int:
    """How long a meeting from ``start`` to ``end`` (the same day) lasts, in minutes."""
    first, last = minutes_of_day(start), minutes_of_day(end)
    if last < first:
        raise ValueError(f"a meeting cannot end ({end}) before it starts ({start})")
    return last - first
