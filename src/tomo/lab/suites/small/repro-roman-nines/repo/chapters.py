"""Chapter headings for the book builder."""

from __future__ import annotations

from roman import to_roman


def heading(number: int, title: str) -> str:
    """heading(4, 'The Storm') -> 'Chapter IV: The Storm'."""
    return f"Chapter {to_roman(number)}: {title.strip()}"


def table_of_contents(titles: list[str]) -> list[str]:
    """One heading per title, chapters numbered from 1."""
    return [heading(n, title) for n, title in enumerate(titles, start=1)]
