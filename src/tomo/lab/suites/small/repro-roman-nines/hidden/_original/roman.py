"""Roman numerals for chapter and volume numbers, 1 to 3999."""

from __future__ import annotations

import re

# value, numeral: largest first, subtractive pairs included, so a greedy walk writes the shortest form
_TABLE = [
    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"),
    (100, "C"), (90, "XC"), (50, "L"), (40, "XL"),
    (10, "X"), (5, "V"), (9, "IX"), (4, "IV"), (1, "I"),
]
_VALID = re.compile(r"M{0,3}(CM|CD|D?C{0,3})(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})")
_VALUES = {"M": 1000, "D": 500, "C": 100, "L": 50, "X": 10, "V": 5, "I": 1}


def to_roman(number: int) -> str:
    """1994 -> 'MCMXCIV'. Only 1..3999 have a standard form."""
    if not 1 <= number <= 3999:
        raise ValueError(f"roman numerals go from 1 to 3999, got {number}")
    out = []
    for value, numeral in _TABLE:
        while number >= value:
            out.append(numeral)
            number -= value
    return "".join(out)


def from_roman(numeral: str) -> int:
    """'MCMXCIV' -> 1994, case-insensitive; ValueError for anything that is not a standard numeral."""
    text = numeral.strip().upper()
    if not text or not _VALID.fullmatch(text):
        raise ValueError(f"not a roman numeral: {numeral!r}")
    total = 0
    for char, following in zip(text, text[1:] + " "):
        value = _VALUES[char]
        total += -value if following != " " and _VALUES[following] > value else value
    return total
