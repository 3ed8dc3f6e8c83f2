import pytest

from report import weekly_lines
from trends import percent_change, trend_label


def test_no_change_is_flat():
    assert percent_change(40, 40) == 0
    assert trend_label(40, 40) == "flat"


def test_zero_baseline_refused():
    with pytest.raises(ValueError):
        percent_change(0, 10)


def test_direction():
    assert trend_label(10, 12).startswith("up ")
    assert trend_label(12, 10).startswith("down ")


def test_report_skips_new_metrics():
    assert weekly_lines({"visits": 5}, {"visits": 5, "signups": 3}) == ["visits: flat"]
