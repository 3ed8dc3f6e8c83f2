from decimal import Decimal

from timesheets.payroll import payslip_line, weekly_pay
from timesheets.shifts import shift_minutes, weekly_minutes


def test_across_midnight():
    assert shift_minutes("22:00", "06:00") == 480
    assert shift_minutes("23:30", "00:15") == 45
    assert shift_minutes("18:00", "17:59") == 1439


def test_day_shifts_and_empty_shift():
    assert shift_minutes("09:00", "17:30") == 510
    assert shift_minutes("08:00", "08:00") == 0
    assert shift_minutes("00:00", "23:59") == 1439


def test_night_week():
    week = [("22:00", "06:00")] * 3 + [("20:00", "08:00")]
    assert weekly_minutes(week) == 36 * 60
    assert weekly_pay(week, Decimal("18.50")) == Decimal("666.00")
    assert payslip_line("Ravi", [("23:00", "07:30")], Decimal("20")) == "Ravi: 8h30m, 170.00"
