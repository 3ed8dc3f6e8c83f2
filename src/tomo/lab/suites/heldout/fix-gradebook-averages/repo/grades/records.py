"""Score sheets are CSV with a header: student,course,score (score 0-100, decimals allowed)."""

from __future__ import annotations

import csv
import io
from typing import TypedDict


class Record(TypedDict):
    student: str
    course: str
    score: float


def read_scores(text: str) -> list[Record]:
    """Parse a score sheet; names are stripped, blank rows skipped, a bad score raises ValueError with its row."""
    records: list[Record] = []
    for number, row in enumerate(csv.DictReader(io.StringIO(text)), start=2):
        if not any((value or "").strip() for value in row.values()):
            continue
        try:
            score = float(row["score"])
        except (TypeError, ValueError):
            raise ValueError(f"row {number}: score {row['score']!r} is not a number") from None
        if not 0 <= score <= 100:
            raise ValueError(f"row {number}: score {score} is outside 0-100")
        records.append({"student": row["student"].strip(), "course": row["course"].strip(), "score": score})
    return records
