import pytest

from rle import decode, encode
from sprites import load_rows, save_rows


def test_encode():
    assert encode("aaabcc") == "3a1b2c"
    assert encode("") == ""


def test_decode():
    assert decode("3a1b2c") == "aaabcc"


def test_digits_refused():
    with pytest.raises(ValueError):
        encode("a1")


def test_garbage_refused():
    with pytest.raises(ValueError):
        decode("a3")


def test_sprite_round_trip():
    rows = ["..##..", ".#..#.", "######"]
    assert save_rows(rows) == "2.2#2.\n1.1#2.1#1.\n6#"
    assert load_rows(save_rows(rows)) == rows
