import pytest

from durations import format_duration, parse_duration
from scheduler import load_jobs


@pytest.mark.parametrize(("text", "seconds"), [("45s", 45), ("1h30m", 5400), ("30m1h", 5400), ("2h", 7200)])
def test_parse(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "h", "1x", "1h1h", "90"])
def test_rejects(text):
    with pytest.raises(ValueError):
        parse_duration(text)


def test_spaces_are_allowed():
    assert parse_duration("1h 30m") == 5400


def test_format_round_trip():
    for seconds in (0, 59, 60, 3600, 5400, 3661):
        assert parse_duration(format_duration(seconds)) == seconds


def test_load_jobs():
    assert load_jobs("backup: every 2h\n# comment\n\nmail: every 5m\n") == {"backup": 7200, "mail": 300}
