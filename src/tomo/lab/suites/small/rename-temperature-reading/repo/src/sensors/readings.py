"""One reading per line of the sensor log: ``2024-05-01T06:00 north 14.5``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class TempRec:
    """A single temperature reading, in degrees Celsius."""

    taken_at: datetime
    sensor: str
    celsius: float

    @property
    def day(self) -> str:
        return self.taken_at.date().isoformat()


def parse_line(line: str) -> TempRec:
    """Parse one log line; ValueError that quotes the line when it is malformed."""
    parts = line.split()
    if len(parts) != 3:
        raise ValueError(f"expected 'timestamp sensor celsius', got {line!r}")
    stamp, sensor, value = parts
    return TempRec(datetime.fromisoformat(stamp), sensor, float(value))
