"""Word statistics for the editor's sidebar: word counts, the most frequent words, reading time."""

from __future__ import annotations

import math
import re
from collections import Counter

# a word is a run of letters; an apostrophe inside a word keeps it whole ("don't", "l'eau")
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)*")


def words(text: str) -> list[str]:
    """The words of ``text``, lower-cased, in order. Digits and punctuation are not part of words."""
    return _WORD.findall(text.lower())


def top_words(text: str, n: int = 10) -> list[tuple[str, int]]:
    """The ``n`` most frequent words with their counts, most frequent first, ties in alphabetical order."""
    counts = Counter(words(text))
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:n]


def reading_time(text: str, words_per_minute: int = 200) -> int:
    """Whole minutes needed to read ``text``, rounded up; 0 for an empty text."""
    return math.ceil(len(words(text)) / words_per_minute)
