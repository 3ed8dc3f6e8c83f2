"""Small statistics over response times in milliseconds."""

from __future__ import annotations

import math
from collections.abc import Sequence


def mean(values: Sequence[float]) -> float:
    if not values:
        raise ValueError("mean of empty data")
    return sum(values) / len(values)


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile: the smallest value with at least ``pct`` percent of the data at or below it."""
    if not values:
        raise ValueError("percentile of empty data")
    if not 0 < pct <= 100:
        raise ValueError(f"pct must be in (0, 100], got {pct}")
    ordered = sorted(values)
    return ordered[math.ceil(pct / 100 * len(ordered)) - 1]
