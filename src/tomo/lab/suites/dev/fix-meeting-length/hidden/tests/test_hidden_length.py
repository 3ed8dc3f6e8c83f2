from clock import meeting_minutes
from day import booked_minutes, summary


def test_length_from_start_to_end():
    assert meeting_minutes("09:15", "10:00") == 45
    assert meeting_minutes("13:00", "13:00") == 0
    assert meeting_minutes("08:30", "17:05") == 515


def test_day_total():
    meetings = [("09:15", "10:00"), ("11:00", "12:30")]
    assert booked_minutes(meetings) == 135
    assert summary(meetings) == "2 meetings, 2h 15m booked"
