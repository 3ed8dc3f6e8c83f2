import pytest

from units import convert
from units.display import show
from units.temperature import normalise_unit


def test_boiling_and_freezing():
    assert convert(212, "F", "C") == 100
    assert convert(32, "F", "C") == 0
    assert convert(100, "C", "F") == 212


def test_kelvin():
    assert convert(0, "C", "K") == pytest.approx(273.15)
    assert convert(373.15, "kelvin", "celsius") == pytest.approx(100)


def test_unit_names():
    assert normalise_unit(" Fahrenheit ") == "F"
    with pytest.raises(ValueError, match="unknown temperature unit"):
        normalise_unit("R")


def test_below_absolute_zero():
    with pytest.raises(ValueError):
        convert(-300, "C", "F")


def test_display():
    assert show(25, "C", "F") == "77.0 °F"
