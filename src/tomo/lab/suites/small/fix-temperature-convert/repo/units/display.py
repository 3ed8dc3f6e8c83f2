"""Text for the station's display panel."""

from __future__ import annotations

from units.temperature import convert, normalise_unit

_SYMBOLS = {"C": "°C", "F": "°F", "K": "K"}


def show(value: float, sensor_unit: str, display_unit: str = "C", digits: int = 1) -> str:
    """A sensor reading converted for display: show(100, 'F') -> '37.8 °C'."""
    unit = normalise_unit(display_unit)
    return f"{convert(value, sensor_unit, unit):.{digits}f} {_SYMBOLS[unit]}"
