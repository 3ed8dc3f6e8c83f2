from datetime import datetime

import pytest

from sensors import TemperatureReading, daily_extremes, mean_by_sensor, parse_line

LOG = """2024-05-01T06:00 north 11.5
2024-05-01T06:00 south 12.0
2024-05-01T14:00 north 19.5
2024-05-02T06:00 north 9.0
"""


def readings():
    return [parse_line(line) for line in LOG.splitlines()]


def test_parse_line():
    assert parse_line("2024-05-01T06:00 north 11.5") == TemperatureReading(datetime(2024, 5, 1, 6), "north", 11.5)


def test_parse_line_rejects():
    with pytest.raises(ValueError, match="expected"):
        parse_line("2024-05-01T06:00 north")


def test_mean_by_sensor():
    assert mean_by_sensor(readings()) == {"north": 13.3, "south": 12.0}


def test_daily_extremes():
    coldest, warmest = daily_extremes(readings())["2024-05-01"]
    assert (coldest.celsius, warmest.celsius) == (11.5, 19.5)
