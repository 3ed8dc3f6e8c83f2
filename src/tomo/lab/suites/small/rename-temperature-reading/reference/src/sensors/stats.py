"""Aggregates over readings for the greenhouse dashboard."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from sensors.readings import TemperatureReading


def mean_by_sensor(readings: Iterable[TemperatureReading]) -> dict[str, float]:
    """Average temperature per sensor, rounded to 0.1 degree."""
    values: dict[str, list[float]] = defaultdict(list)
    for reading in readings:
        values[reading.sensor].append(reading.celsius)
    return {sensor: round(sum(v) / len(v), 1) for sensor, v in sorted(values.items())}


def daily_extremes(readings: Iterable[TemperatureReading]) -> dict[str, tuple[TemperatureReading, TemperatureReading]]:
    """For each day, the coldest and the warmest reading (the earlier one wins a tie)."""
    days: dict[str, list[TemperatureReading]] = defaultdict(list)
    for reading in readings:
        days[reading.day].append(reading)
    return {
        day: (min(rs, key=lambda r: r.celsius), max(rs, key=lambda r: r.celsius))
        for day, rs in sorted(days.items())
    }
