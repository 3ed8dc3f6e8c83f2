from rooms.availability import day_summary, free_slots
from rooms.busy import merge_busy


def test_touching_intervals_merge():
    assert merge_busy([(540, 600), (600, 660)]) == [(540, 660)]
    assert merge_busy([(600, 660), (480, 540), (540, 600)]) == [(480, 660)]


def test_chain_of_touching_and_overlapping():
    assert merge_busy([(500, 510), (510, 520), (515, 530), (531, 540)]) == [(500, 530), (531, 540)]


def test_separate_intervals_stay_separate():
    assert merge_busy([(540, 599), (600, 660)]) == [(540, 599), (600, 660)]


def test_summary_and_slots():
    busy = [(540, 600), (600, 660), (660, 720)]
    assert day_summary(busy) == "busy 09:00-12:00"
    assert free_slots(busy, min_length=0) == [(480, 540), (720, 1080)]
