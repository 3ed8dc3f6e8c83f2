from page import rating_line
from reviews import Review, average_stars


def test_unrated_reviews_do_not_count():
    reviews = [Review("ann", "good", 4), Review("bob", "great", 5), Review("cy", "arrived late")]
    assert average_stars(reviews) == 4.5
    assert rating_line(reviews) == "4.5 stars from 2 ratings"


def test_one_rating_among_many_texts():
    reviews = [Review("ann", "fine")] * 3 + [Review("bob", "great", 5)]
    assert average_stars(reviews) == 5.0
