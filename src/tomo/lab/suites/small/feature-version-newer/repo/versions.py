"""Version strings of our plugins: ``1.4.2``, ``v2.0``, ``3``. Missing parts count as zero."""

from __future__ import annotations

import re

_VERSION = re.compile(r"v?(\d+)(?:\.(\d+))?(?:\.(\d+))?")


def parse_version(text: str) -> tuple[int, int, int]:
    """'v1.10' -> (1, 10, 0); surrounding whitespace is ignored; ValueError for anything else."""
    match = _VERSION.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"not a version: {text!r} (expected MAJOR[.MINOR[.PATCH]])")
    return tuple(int(part or 0) for part in match.groups())  # type: ignore[return-value]


def format_version(version: tuple[int, int, int]) -> str:
    return ".".join(str(part) for part in version)
