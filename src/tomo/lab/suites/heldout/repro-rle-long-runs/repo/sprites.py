"""Sprites are saved one row per line, each row run-length encoded."""

from __future__ import annotations

from rle import decode, encode


def save_rows(rows: list[str]) -> str:
    return "\n".join(encode(row) for row in rows)


def load_rows(saved: str) -> list[str]:
    """Rows of a saved sprite; every row must have the same width."""
    rows = [decode(line) for line in saved.splitlines()]
    if len({len(row) for row in rows}) > 1:
        raise ValueError("rows of a sprite must all be the same width")
    return rows
