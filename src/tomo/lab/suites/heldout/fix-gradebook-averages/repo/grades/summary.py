"""Averages for the term report."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from grades.records import Record


def _averages(groups: dict[str, list[float]]) -> dict[str, float]:
    return {name: round(sum(scores) / len(scores), 1) for name, scores in sorted(groups.items())}


def average_by_course(records: Iterable[Record]) -> dict[str, float]:
    """Course -> mean score of everyone who took it, rounded to one decimal."""
    groups: dict[str, list[float]] = defaultdict(list)
    for record in records:
        groups[record["course"]].append(record["score"])
    return _averages(groups)


def average_by_student(records: Iterable[Record]) -> dict[str, float]:
    """Student -> mean of their scores over all their courses, rounded to one decimal."""
    groups: dict[str, list[float]] = defaultdict(list)
    for record in records:
        groups[record["course"]].append(record["score"])
    return _averages(groups)


def honour_roll(records: Iterable[Record], cutoff: float = 85.0) -> list[str]:
    """Students whose average is at least ``cutoff``, best first (ties by name)."""
    averages = average_by_student(records)
    return sorted((s for s, avg in averages.items() if avg >= cutoff), key=lambda s: (-averages[s], s))
