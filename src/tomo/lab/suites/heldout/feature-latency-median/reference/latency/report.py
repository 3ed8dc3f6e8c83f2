"""The per-endpoint latency summary for the on-call dashboard."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from latency.stats import mean, median, percentile


def parse_access_log(lines: Iterable[str]) -> dict[str, list[float]]:
    """'GET /api/cart 200 123.4' lines -> endpoint ('GET /api/cart') -> response times; other lines are skipped."""
    times: dict[str, list[float]] = defaultdict(list)
    for line in lines:
        parts = line.split()
        if len(parts) != 4:
            continue
        method, path, _status, millis = parts
        try:
            times[f"{method} {path}"].append(float(millis))
        except ValueError:
            continue
    return dict(times)


def summarize(times: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    """Endpoint -> {"count", "mean", "median", "p95", "max"}; endpoints without data are left out."""
    return {
        endpoint: {
            "count": len(values),
            "mean": round(mean(values), 1),
            "median": median(values),
            "p95": percentile(values, 95),
            "max": max(values),
        }
        for endpoint, values in sorted(times.items())
        if values
    }
