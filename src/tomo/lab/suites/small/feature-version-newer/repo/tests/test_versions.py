import pytest

from updater import needs_update, updates
from versions import format_version, parse_version


@pytest.mark.parametrize(("text", "parts"), [("1.4.2", (1, 4, 2)), ("v2.0", (2, 0, 0)), (" 3 ", (3, 0, 0))])
def test_parse(text, parts):
    assert parse_version(text) == parts


@pytest.mark.parametrize("text", ["", "1.2.3.4", "one", "1..2"])
def test_parse_rejects(text):
    with pytest.raises(ValueError):
        parse_version(text)


def test_format():
    assert format_version((1, 10, 0)) == "1.10.0"


def test_same_version_needs_no_update():
    assert not needs_update("1.2.3", "1.2.3")


def test_updates_listing():
    assert updates({"b": "1.0", "a": "2.0"}, {"a": "2.1", "c": "9"}) == ["a 2.0 -> 2.1"]
