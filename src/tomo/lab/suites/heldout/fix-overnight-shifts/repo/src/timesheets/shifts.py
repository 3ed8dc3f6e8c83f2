"""Shift lengths. A shift is given by its start and end on the wall clock, never by dates."""

from __future__ import annotations

from collections.abc import Iterable

MINUTES_PER_DAY = 24 * 60


def parse_hhmm(text: str) -> int:
    """'07:30' -> 450 minutes after midnight; ValueError naming the text otherwise."""
    hours, sep, minutes = text.strip().partition(":")
    if not sep or not hours.isdigit() or not minutes.isdigit() or len(minutes) != 2:
        raise ValueError(f"expected HH:MM, got {text!r}")
    h, m = int(hours), int(minutes)
    if h > 23 or m > 59:
        raise ValueError(f"not a time of day: {text!r}")
    return h * 60 + m


def shift_minutes(start: str, end: str) -> int:
    """Length of a shift in minutes.

    Night shifts cross midnight: 22:00 to 06:00 is 480 minutes. No shift lasts 24 hours or more, so an end equal to
    the start means an empty shift (0).
    """
    return parse_hhmm(end) - parse_hhmm(start)


def weekly_minutes(shifts: Iterable[tuple[str, str]]) -> int:
    return sum(shift_minutes(start, end) for start, end in shifts)


def format_hours(minutes: int) -> str:
    """2310 -> '38h30m'."""
    hours, rest = divmod(minutes, 60)
    return f"{hours}h{rest:02d}m"
