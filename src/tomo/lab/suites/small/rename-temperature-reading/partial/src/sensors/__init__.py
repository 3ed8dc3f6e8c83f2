"""Readings from the greenhouse temperature sensors and the statistics we chart from them."""

from sensors.readings import TemperatureReading, parse_line
from sensors.stats import daily_extremes, mean_by_sensor

__all__ = ["TempRec", "daily_extremes", "mean_by_sensor", "parse_line"]
