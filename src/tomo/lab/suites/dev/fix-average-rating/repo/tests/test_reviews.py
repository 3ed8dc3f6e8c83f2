import pytest

from page import rating_line
from reviews import Review, average_stars


def test_no_reviews():
    assert average_stars([]) is None
    assert rating_line([]) == "no ratings yet"


def test_text_only_reviews():
    assert rating_line([Review("ann", "nice")]) == "no ratings yet"


def test_all_rated():
    assert average_stars([Review("ann", "ok", 3), Review("bob", "good", 4)]) == 3.5


def test_stars_out_of_range():
    with pytest.raises(ValueError):
        Review("cy", "wow", 6)
