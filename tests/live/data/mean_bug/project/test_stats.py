from stats import mean


def test_mean_of_three():
    assert mean([2, 4, 6]) == 4
