from datetime import date

import pytest

from workdays import add_business_days, business_days_between, due_date, is_business_day

MON = date(2024, 3, 4)


def test_weekdays_are_business_days():
    assert is_business_day(MON)
    assert not is_business_day(date(2024, 3, 9))
    assert not is_business_day(date(2024, 3, 10))


def test_holiday_is_not_a_business_day():
    assert not is_business_day(MON, [MON])


def test_add_within_a_week():
    assert add_business_days(MON, 2) == date(2024, 3, 6)


def test_add_skips_holidays():
    assert add_business_days(MON, 1, holidays=[date(2024, 3, 5)]) == date(2024, 3, 6)


def test_add_zero_days():
    assert add_business_days(MON, 0) == MON


def test_negative_days_refused():
    with pytest.raises(ValueError):
        add_business_days(MON, -1)


def test_between_counts_weekdays_only():
    assert business_days_between(MON, date(2024, 3, 11)) == 5


def test_due_date_uses_terms():
    assert due_date(MON, terms_days=3) == date(2024, 3, 7)
