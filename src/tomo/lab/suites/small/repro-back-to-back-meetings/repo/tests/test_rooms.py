import pytest

from rooms.availability import day_summary, free_slots
from rooms.busy import hhmm, merge_busy


def test_merge_overlapping():
    assert merge_busy([(600, 700), (540, 620), (800, 830)]) == [(540, 700), (800, 830)]


def test_merge_refuses_backwards():
    with pytest.raises(ValueError, match="ends before it starts"):
        merge_busy([(600, 540)])


def test_hhmm():
    assert hhmm(545) == "09:05"


def test_free_slots():
    assert free_slots([(540, 600), (700, 1000)], min_length=60) == [(480, 540), (600, 700), (1000, 1080)]


def test_summary():
    assert day_summary([]) == "free all day"
    assert day_summary([(840, 900), (540, 660)]) == "busy 09:00-11:00, 14:00-15:00"
