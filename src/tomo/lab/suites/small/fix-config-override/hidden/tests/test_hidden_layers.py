from appconf import load, merge_layers


def test_later_layer_wins():
    assert merge_layers([{"port": "8000"}, {"port": "9000"}]) == {"port": "9000"}


def test_three_layers():
    layers = [{"a": "1", "b": "1", "c": "1"}, {"b": "2", "c": "2"}, {"c": "3", "d": "3"}]
    assert merge_layers(layers) == {"a": "1", "b": "2", "c": "3", "d": "3"}


def test_local_file_overrides_defaults(tmp_path):
    defaults = tmp_path / "defaults.ini"
    site = tmp_path / "site.ini"
    local = tmp_path / "local.ini"
    defaults.write_text("[server]\nport = 8000\nhost = localhost\n[log]\nlevel = info\n", encoding="utf-8")
    site.write_text("[server]\nhost = example.org\n", encoding="utf-8")
    local.write_text("[SERVER]\nPort = 9000\n", encoding="utf-8")
    assert load([defaults, site, local]) == {
        "server.port": "9000", "server.host": "example.org", "log.level": "info"}


def test_missing_middle_layer(tmp_path):
    defaults = tmp_path / "defaults.ini"
    local = tmp_path / "local.ini"
    defaults.write_text("debug = false\n", encoding="utf-8")
    local.write_text("debug = true\n", encoding="utf-8")
    assert load([defaults, tmp_path / "site.ini", local]) == {"debug": "true"}
