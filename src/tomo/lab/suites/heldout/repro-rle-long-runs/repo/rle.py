"""Run-length encoding for the sprite editor's save files: 'aaabcc' <-> '3a1b2c'.

Only non-digit characters can be encoded (a digit would be read back as part of a count).
"""

from __future__ import annotations

import re
from itertools import groupby

_RUN = re.compile(r"(\d)(\D)")


def encode(text: str) -> str:
    """Each run of the same character becomes its length followed by the character."""
    if any(char.isdigit() for char in text):
        raise ValueError("digits cannot be run-length encoded")
    return "".join(f"{len(list(group))}{char}" for char, group in groupby(text))


def decode(data: str) -> str:
    """The inverse of ``encode``; ValueError for data that ``encode`` cannot have produced."""
    runs = _RUN.findall(data)
    if "".join(count + char for count, char in runs) != data:
        raise ValueError(f"not run-length encoded data: {data!r}")
    return "".join(char * int(count) for count, char in runs)
