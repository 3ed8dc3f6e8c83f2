"""Permalinks of posts: /YYYY/MM/DD/slug/."""

from __future__ import annotations

from datetime import date

from blog.slugs import slugify


def permalink(title: str, published: date) -> str:
    """The permanent URL path of a post: permalink('Hello World', date(2024, 3, 5)) -> '/2024/03/05/hello-world/'."""
    return f"/{published:%Y/%m/%d}/{slugify(title)}/"


def archive_links(posts: list[tuple[str, date]]) -> list[str]:
    """Permalinks of ``posts`` (title, date), newest first."""
    return [permalink(title, day) for title, day in sorted(posts, key=lambda p: p[1], reverse=True)]
