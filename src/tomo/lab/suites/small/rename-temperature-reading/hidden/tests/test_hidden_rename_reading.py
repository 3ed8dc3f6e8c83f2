from datetime import datetime

import sensors
import sensors.readings
import sensors.stats
from sensors import TemperatureReading, mean_by_sensor
from sensors.readings import parse_line


def test_class_under_new_name():
    reading = parse_line("2024-06-01T12:00 east 21.0")
    assert isinstance(reading, TemperatureReading)
    assert reading == sensors.readings.TemperatureReading(datetime(2024, 6, 1, 12), "east", 21.0)
    assert TemperatureReading.__name__ == "TemperatureReading"


def test_star_import_exports_it():
    namespace = {}
    exec("from sensors import *", namespace)
    assert "TemperatureReading" in namespace


def test_stats_take_new_class():
    readings = [TemperatureReading(datetime(2024, 6, 1, h), "east", t) for h, t in ((6, 10.0), (12, 20.0))]
    assert mean_by_sensor(readings) == {"east": 15.0}


def test_old_name_is_gone():
    for module in (sensors, sensors.readings, sensors.stats):
        assert not hasattr(module, "TempRec"), module.__name__
