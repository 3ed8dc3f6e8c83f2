"""The text under a result list: 'Page 2 of 5 · ‹ previous · next ›'."""

from __future__ import annotations

from paging import Page


def footer(page: Page[object]) -> str:
    parts = [f"Page {page.number} of {page.total_pages}"]
    if page.has_previous:
        parts.append("‹ previous")
    if page.has_next:
        parts.append("next ›")
    return " · ".join(parts)
