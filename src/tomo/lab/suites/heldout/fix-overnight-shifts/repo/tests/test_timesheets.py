from decimal import Decimal

import pytest

from timesheets.payroll import payslip_line, weekly_pay
from timesheets.shifts import format_hours, parse_hhmm, shift_minutes


def test_parse_hhmm():
    assert parse_hhmm(" 07:30 ") == 450


@pytest.mark.parametrize("bad", ["7", "24:00", "12:60", "ab:cd", "7:5"])
def test_parse_hhmm_rejects(bad):
    with pytest.raises(ValueError):
        parse_hhmm(bad)


def test_day_shift():
    assert shift_minutes("09:00", "17:30") == 510


def test_format_hours():
    assert format_hours(2310) == "38h30m"


def test_pay():
    week = [("08:00", "16:00")] * 4 + [("08:00", "14:30")]
    assert weekly_pay(week, Decimal("15.00")) == Decimal("577.50")
    assert payslip_line("Dana", week, Decimal("15.00")) == "Dana: 38h30m, 577.50"
