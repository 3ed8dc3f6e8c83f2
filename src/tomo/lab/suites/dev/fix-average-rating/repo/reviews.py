"""Product reviews: a star rating from 1 to 5, or None when the reviewer only wrote text."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Review:
    author: str
    text: str
    stars: int | None = None

    def __post_init__(self) -> None:
        if self.stars is not None and not 1 <= self.stars <= 5:
            raise ValueError(f"stars must be 1 to 5, got {self.stars}")


def average_stars(reviews: list[Review]) -> float | None:
    """The mean of the star ratings, to one decimal; None when no review has stars."""
    rated = [review.stars for review in reviews if review.stars is not None]
    if not rated:
        return None
    return round(sum(rated) / len(reviews), 1)
