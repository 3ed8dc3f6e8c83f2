import pytest

from appconf import load, merge_layers, parse_ini
from appconf.parse import ConfigError


def test_sections_and_comments():
    text = "name = demo\n# comment\n[Server]\nPort = 8000\n; also a comment\nhost= example.org \n"
    assert parse_ini(text) == {"name": "demo", "server.port": "8000", "server.host": "example.org"}


def test_bad_line_is_named():
    with pytest.raises(ConfigError, match="line 2"):
        parse_ini("[a]\nnonsense\n")


def test_merge_keeps_keys_from_all_layers():
    assert merge_layers([{"a": "1"}, {"b": "2"}]) == {"a": "1", "b": "2"}


def test_load_skips_missing_files(tmp_path):
    defaults = tmp_path / "defaults.ini"
    defaults.write_text("[server]\nport = 8000\n", encoding="utf-8")
    assert load([defaults, tmp_path / "local.ini"]) == {"server.port": "8000"}
