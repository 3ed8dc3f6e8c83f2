"""Busy intervals of a room: half-open [start, end) minute ranges."""

from __future__ import annotations

from collections.abc import Iterable

Interval = tuple[int, int]


def merge_busy(intervals: Iterable[Interval]) -> list[Interval]:
    """Sort ``intervals`` and merge the ones that overlap or touch: [(540, 600), (600, 660)] -> [(540, 660)].

    Empty or backwards intervals (end <= start) are refused with ValueError.
    """
    ordered = sorted(intervals)
    for start, end in ordered:
        if end <= start:
            raise ValueError(f"interval ({start}, {end}) ends before it starts")
    merged: list[Interval] = []
    for start, end in ordered:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def hhmm(minutes: int) -> str:
    """540 -> '09:00'."""
    return f"{minutes // 60:02d}:{minutes % 60:02d}"
