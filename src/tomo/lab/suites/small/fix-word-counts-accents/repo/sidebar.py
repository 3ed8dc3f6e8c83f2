"""The text shown in the editor's statistics sidebar."""

from __future__ import annotations

from textstats import reading_time, top_words, words


def sidebar(text: str, n: int = 3) -> str:
    """'120 words, 1 min read' followed by one 'word: count' line per frequent word."""
    lines = [f"{len(words(text))} words, {reading_time(text)} min read"]
    lines += [f"{word}: {count}" for word, count in top_words(text, n)]
    return "\n".join(lines)
