"""Human-written durations for the job scheduler's config: ``1h30m``, ``45s``, ``2h 15m``.

Units are h, m and s, each at most once, in any order. Parts may be separated by whitespace (``1h 30m``) and
whitespace around the value is ignored, because the values come straight from config files.
"""

from __future__ import annotations

import re

_PART = re.compile(r"(\d+)([hms])")
_WHOLE = re.compile(r"(?:\d+[hms])+")
_SECONDS = {"h": 3600, "m": 60, "s": 1}


def parse_duration(text: str) -> int:
    """The number of seconds ``text`` stands for; ValueError naming the text if it is not a duration."""
    if not _WHOLE.fullmatch(text):
        raise ValueError(f"not a duration: {text!r}")
    total = 0
    seen: set[str] = set()
    for amount, unit in _PART.findall(text):
        if unit in seen:
            raise ValueError(f"unit {unit!r} given twice in {text!r}")
        seen.add(unit)
        total += int(amount) * _SECONDS[unit]
    return total


def format_duration(seconds: int) -> str:
    """The short form of ``seconds``: 5400 -> '1h30m', 59 -> '59s', 0 -> '0s'."""
    if seconds < 0:
        raise ValueError(f"a duration cannot be negative: {seconds}")
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{n}{unit}" for n, unit in ((hours, "h"), (minutes, "m"), (secs, "s")) if n]
    return "".join(parts) or "0s"
