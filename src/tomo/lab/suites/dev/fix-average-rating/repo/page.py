"""The product page's rating line."""

from __future__ import annotations

from reviews import Review, average_stars


def rating_line(reviews: list[Review]) -> str:
    """'4.5 stars from 2 ratings' or 'no ratings yet'."""
    average = average_stars(reviews)
    if average is None:
        return "no ratings yet"
    count = sum(1 for review in reviews if review.stars is not None)
    return f"{average} stars from {count} rating{'s' if count != 1 else ''}"
