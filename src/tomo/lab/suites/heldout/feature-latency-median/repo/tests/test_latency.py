import pytest

from latency.report import parse_access_log, summarize
from latency.stats import mean, percentile

LOG = ["GET /api/cart 200 120", "GET /api/cart 200 80.5", "garbage", "POST /api/pay 502 900", "GET /api/cart 500 x"]


def test_mean_and_percentile():
    assert mean([1, 2, 3, 4]) == 2.5
    assert percentile(list(range(1, 101)), 95) == 95
    with pytest.raises(ValueError):
        mean([])


def test_parse():
    assert parse_access_log(LOG) == {"GET /api/cart": [120.0, 80.5], "POST /api/pay": [900.0]}


def test_summary():
    summary = summarize(parse_access_log(LOG))
    assert summary["GET /api/cart"] == {"count": 2, "mean": 100.2, "p95": 120.0, "max": 120.0}
    assert list(summary) == ["GET /api/cart", "POST /api/pay"]
