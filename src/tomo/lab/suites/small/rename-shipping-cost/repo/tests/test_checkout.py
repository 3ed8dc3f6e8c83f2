from decimal import Decimal

import pytest

from store.checkout import Line, summarize


def test_summary():
    lines = [Line("BOOK", Decimal("12.00"), 2, Decimal("0.6")), Line("PEN", Decimal("1.50"), 4, Decimal("0.05"))]
    summary = summarize(lines, "eu")
    assert summary.goods == Decimal("30.00")
    assert summary.shipping == Decimal("11.60")
    assert summary.total == Decimal("41.60")


def test_empty_basket():
    with pytest.raises(ValueError):
        summarize([], "domestic")
