from rle import decode, encode


def test_runs_of_ten_or_more_round_trip():
    assert decode(encode("a" * 12)) == "a" * 12
    assert decode("10x2y") == "x" * 10 + "yy"
