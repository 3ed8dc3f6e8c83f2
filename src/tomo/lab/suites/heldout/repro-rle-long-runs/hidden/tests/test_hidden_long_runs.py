import pytest

from rle import decode, encode
from sprites import load_rows, save_rows


def test_long_runs():
    assert decode("12a") == "a" * 12
    assert decode("100b1c") == "b" * 100 + "c"
    assert decode(encode("z" * 1000)) == "z" * 1000


def test_round_trip_mixed():
    text = "." * 9 + "#" * 10 + "." * 11 + "x"
    assert encode(text) == "9.10#11.1x"
    assert decode(encode(text)) == text


def test_wide_sprite():
    rows = ["." * 32, "." * 10 + "#" * 12 + "." * 10]
    assert load_rows(save_rows(rows)) == rows


@pytest.mark.parametrize("bad", ["a3", "3", "12", "3a4"])
def test_still_refuses_garbage(bad):
    with pytest.raises(ValueError):
        decode(bad)
