"""Unit conversions for the weather station display."""

from units.temperature import convert

__all__ = ["convert"]
