from decimal import Decimal

from bill import shares
from money import split_evenly


def test_three_ways():
    assert split_evenly(Decimal("100.00"), 3) == [Decimal("33.34"), Decimal("33.33"), Decimal("33.33")]


def test_two_extra_cents():
    assert split_evenly(Decimal("100.02"), 3) == [Decimal("33.34"), Decimal("33.34"), Decimal("33.34")]
    assert split_evenly(Decimal("10.02"), 4) == [Decimal("2.51"), Decimal("2.51"), Decimal("2.50"), Decimal("2.50")]


def test_fewer_cents_than_people():
    assert split_evenly(Decimal("0.05"), 3) == [Decimal("0.02"), Decimal("0.02"), Decimal("0.01")]


def test_shares_always_add_up():
    for cents in range(0, 1000, 7):
        total = Decimal(cents) / 100
        for people in range(1, 8):
            parts = split_evenly(total, people)
            assert sum(parts) == total, (total, people)
            assert max(parts) - min(parts) <= Decimal("0.01")


def test_shares_with_tip_add_up():
    owed = shares("100", ["ann", "bob", "cy"], tip_percent=15)
    assert sum(owed.values()) == Decimal("115.00")
    assert owed["ann"] == Decimal("38.34")
