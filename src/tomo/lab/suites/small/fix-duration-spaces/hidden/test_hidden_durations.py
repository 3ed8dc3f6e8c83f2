import pytest

from durations import parse_duration
from scheduler import load_jobs


@pytest.mark.parametrize(("text", "seconds"), [
    ("1h 30m", 5400),
    ("1h 30m 15s", 5415),
    ("  2h\n", 7200),
    ("1h\t5m", 3900),
    ("1h\u00a030m", 5400),
    ("\u00a045s ", 45),
    ("1h30m", 5400),
])
def test_whitespace_is_allowed(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "   ", "h", "1x", "1h 1h", "1h 30", "1 h 2"])
def test_still_rejects_non_durations(text):
    with pytest.raises(ValueError):
        parse_duration(text)


def test_jobs_with_spaced_durations():
    assert load_jobs("report: every 1h 30m\nsync: every 10m \n") == {"report": 5400, "sync": 600}
