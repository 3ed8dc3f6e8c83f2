import pytest

from chapters import heading, table_of_contents
from roman import from_roman, to_roman


@pytest.mark.parametrize(("number", "numeral"), [(1, "I"), (4, "IV"), (5, "V"), (40, "XL"), (1994, "MCMXCIV")])
def test_to_roman(number, numeral):
    assert to_roman(number) == numeral


@pytest.mark.parametrize("number", [0, 4000, -3])
def test_to_roman_range(number):
    with pytest.raises(ValueError):
        to_roman(number)


def test_from_roman():
    assert from_roman("mcmxciv") == 1994
    assert from_roman("IX") == 9
    with pytest.raises(ValueError):
        from_roman("IIII")


def test_headings():
    assert heading(4, " The Storm ") == "Chapter IV: The Storm"
    assert table_of_contents(["A", "B", "C"])[-1] == "Chapter III: C"
