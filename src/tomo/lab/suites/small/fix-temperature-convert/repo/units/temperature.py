"""Temperature conversions between Celsius, Fahrenheit and Kelvin, by way of Celsius."""

from __future__ import annotations

_ALIASES = {"c": "C", "celsius": "C", "f": "F", "fahrenheit": "F", "k": "K", "kelvin": "K"}
ABSOLUTE_ZERO_C = -273.15


def normalise_unit(unit: str) -> str:
    """'c', ' Celsius ', 'F', 'kelvin' -> 'C', 'C', 'F', 'K'; ValueError for anything else."""
    try:
        return _ALIASES[unit.strip().lower()]
    except KeyError:
        raise ValueError(f"unknown temperature unit {unit!r} (use C, F or K)") from None


def to_celsius(value: float, unit: str) -> float:
    unit = normalise_unit(unit)
    if unit == "F":
        return (value - 32) * 5 // 9
    if unit == "K":
        return value + ABSOLUTE_ZERO_C
    return value


def from_celsius(value: float, unit: str) -> float:
    unit = normalise_unit(unit)
    if unit == "F":
        return value * 9 / 5 + 32
    if unit == "K":
        return value - ABSOLUTE_ZERO_C
    return value


def convert(value: float, from_unit: str, to_unit: str) -> float:
    """``value`` in ``from_unit`` expressed in ``to_unit``; below absolute zero is an error."""
    celsius = to_celsius(value, from_unit)
    if celsius < ABSOLUTE_ZERO_C:
        raise ValueError(f"{value} {from_unit} is below absolute zero")
    return from_celsius(celsius, to_unit)
