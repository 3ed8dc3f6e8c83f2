import pytest

from latency.report import parse_access_log, summarize
from latency.stats import median


@pytest.mark.parametrize(("values", "expected"), [
    ([5], 5),
    ([3, 1, 2], 2),
    ([4, 1, 3, 2], 2.5),
    ([10.0, 20.0], 15.0),
    ([7, 7, 7, 1], 7),
    ([100, 1, 50, 2, 3], 3),
])
def test_median(values, expected):
    assert median(values) == expected


def test_median_leaves_input_alone():
    values = [3, 1, 2]
    median(values)
    assert values == [3, 1, 2]


def test_median_of_tuple():
    assert median((9.5, 0.5)) == 5.0


def test_median_empty():
    with pytest.raises(ValueError):
        median([])


def test_summary_has_median():
    log = ["GET /a 200 10", "GET /a 200 30", "GET /a 200 20", "GET /a 200 1000", "POST /b 201 5"]
    summary = summarize(parse_access_log(log))
    assert summary["GET /a"] == {"count": 4, "mean": 265.0, "median": 25.0, "p95": 1000.0, "max": 1000.0}
    assert summary["POST /b"]["median"] == 5.0
