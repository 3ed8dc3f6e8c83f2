"""The hidden oracle: run against the workspace after the turn, never shown to the model."""

from stats import mean


def test_mean_of_three():
    assert mean([2, 4, 6]) == 4


def test_mean_of_one_and_of_fractions():
    assert mean([5]) == 5
    assert mean([1, 2, 3, 4]) == 2.5
