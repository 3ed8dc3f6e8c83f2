"""Slugs: the URL-safe form of a post title."""

from __future__ import annotations

import re
import unicodedata

_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def slugify(title: str, max_length: int = 60) -> str:
    """'Hello, Wörld!' -> 'hello-world'.

    Accents are dropped (NFKD), everything else that is not a letter or digit becomes a single dash, there is no
    dash at either end, and the slug is cut at a word boundary to at most ``max_length`` characters.
    """
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    slug = _NOT_ALNUM.sub("-", ascii_title.lower()).strip("-")
    if len(slug) > max_length:
        slug = slug[:max_length + 1].rsplit("-", 1)[0] if "-" in slug[:max_length + 1] else slug[:max_length]
    return slug or "untitled"
