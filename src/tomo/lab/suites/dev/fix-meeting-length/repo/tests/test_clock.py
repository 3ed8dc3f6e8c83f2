import pytest

from clock import meeting_minutes, minutes_of_day
from day import summary


def test_minutes_of_day():
    assert minutes_of_day("00:00") == 0
    assert minutes_of_day("09:15") == 555
    assert minutes_of_day("23:59") == 1439


@pytest.mark.parametrize("bad", ["9", "24:00", "12:60", "ab:cd", "9:5"])
def test_bad_times(bad):
    with pytest.raises(ValueError):
        minutes_of_day(bad)


def test_end_before_start_refused():
    with pytest.raises(ValueError):
        meeting_minutes("10:00", "09:00")


def test_empty_day():
    assert summary([]) == "0 meetings, 0h 00m booked"
