from chapters import heading
from roman import from_roman, to_roman


def test_nines():
    assert [to_roman(n) for n in (9, 19, 49, 99, 3999)] == ["IX", "XIX", "XLIX", "XCIX", "MMMCMXCIX"]


def test_round_trip_everything():
    for number in range(1, 4000):
        assert from_roman(to_roman(number)) == number


def test_heading_nine():
    assert heading(9, "Nine") == "Chapter IX: Nine"
