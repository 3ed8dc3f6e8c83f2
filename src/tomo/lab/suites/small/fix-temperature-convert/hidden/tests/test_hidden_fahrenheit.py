import pytest

from units import convert
from units.display import show


@pytest.mark.parametrize(("fahrenheit", "celsius"), [
    (100, 37.7778), (0, -17.7778), (98.6, 37.0), (-40, -40.0), (50, 10.0), (33, 0.5556), (451, 232.7778),
])
def test_fahrenheit_to_celsius(fahrenheit, celsius):
    assert convert(fahrenheit, "F", "C") == pytest.approx(celsius, abs=1e-4)


def test_fahrenheit_to_kelvin():
    assert convert(100, "F", "K") == pytest.approx(310.9278, abs=1e-4)


def test_round_trip():
    for value in (-459.67, -10, 0, 37.5, 101.3):
        assert convert(convert(value, "F", "C"), "C", "F") == pytest.approx(value)


def test_display_from_fahrenheit_sensor():
    assert show(100, "F") == "37.8 °C"
    assert show(0, "F", digits=2) == "-17.78 °C"
