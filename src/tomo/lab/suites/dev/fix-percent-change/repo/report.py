"""The weekly report: one line per metric."""

from __future__ import annotations

from trends import trend_label


def weekly_lines(last_week: dict[str, float], this_week: dict[str, float]) -> list[str]:
    """'visitors: up 50.0%' for each metric both weeks have, in this week's order."""
    return [f"{name}: {trend_label(last_week[name], value)}" for name, value in this_week.items()
            if name in last_week]
