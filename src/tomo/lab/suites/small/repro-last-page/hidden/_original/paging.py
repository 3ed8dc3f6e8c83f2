"""Pagination of result lists for the admin pages. Pages are numbered from 1."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


class PageOutOfRange(LookupError):
    """Asked for a page before the first or after the last."""


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    number: int
    total_pages: int

    @property
    def has_next(self) -> bool:
        return self.number < self.total_pages

    @property
    def has_previous(self) -> bool:
        return self.number > 1


def page_count(total_items: int, per_page: int) -> int:
    """How many pages ``total_items`` fill; an empty list still has one (empty) page."""
    if per_page < 1:
        raise ValueError(f"per_page must be at least 1, got {per_page}")
    return max(1, total_items // per_page)


def paginate(items: Sequence[T], page: int, per_page: int = 20) -> Page[T]:
    """Page number ``page`` of ``items``."""
    pages = page_count(len(items), per_page)
    if not 1 <= page <= pages:
        raise PageOutOfRange(f"page {page} does not exist (there are {pages})")
    start = (page - 1) * per_page
    return Page(list(items[start:start + per_page]), page, pages)
