from datetime import date

from workdays import add_business_days, due_date

FRI = date(2024, 3, 1)


def test_friday_plus_one_is_monday():
    assert add_business_days(FRI, 1) == date(2024, 3, 4)


def test_never_lands_on_a_weekend():
    for start_day in range(1, 15):
        start = date(2024, 3, start_day)
        for days in range(1, 12):
            assert add_business_days(start, days).weekday() < 5, (start, days)


def test_full_week_from_friday():
    assert add_business_days(FRI, 5) == date(2024, 3, 8)


def test_weekend_and_holiday_together():
    assert add_business_days(date(2024, 3, 7), 2, holidays=[date(2024, 3, 11)]) == date(2024, 3, 12)


def test_from_a_saturday():
    assert add_business_days(date(2024, 3, 2), 1) == date(2024, 3, 4)


def test_due_date_over_two_weekends():
    assert due_date(FRI) == date(2024, 3, 15)
