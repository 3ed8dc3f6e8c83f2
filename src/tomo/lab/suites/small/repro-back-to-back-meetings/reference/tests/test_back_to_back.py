from rooms.availability import day_summary
from rooms.busy import merge_busy


def test_touching_meetings_are_merged():
    assert merge_busy([(540, 600), (600, 660)]) == [(540, 660)]


def test_summary_shows_one_block():
    assert day_summary([(540, 600), (600, 660)]) == "busy 09:00-11:00"
