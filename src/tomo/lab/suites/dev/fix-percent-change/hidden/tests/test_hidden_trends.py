from report import weekly_lines
from trends import percent_change, trend_label


def test_rise_in_percent_of_last_week():
    assert percent_change(50, 75) == 50.0
    assert percent_change(80, 100) == 25.0


def test_drop_in_percent_of_last_week():
    assert percent_change(200, 150) == -25.0
    assert trend_label(40, 30) == "down 25.0%"


def test_report_line():
    assert weekly_lines({"visitors": 50}, {"visitors": 75}) == ["visitors: up 50.0%"]
