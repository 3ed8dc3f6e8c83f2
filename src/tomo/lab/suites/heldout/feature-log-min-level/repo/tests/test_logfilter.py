import pytest

from logfilter import level_of, main

LOG = """2024-03-01 12:00:01 INFO web: started
2024-03-01 12:00:07 WARNING payment: gateway slow
  continuation of a stack trace
2024-03-01 12:00:09 ERROR payment: Timeout talking to gateway
2024-03-01 12:00:10 DEBUG web: timeout budget 30s
"""


@pytest.fixture
def log(tmp_path):
    path = tmp_path / "app.log"
    path.write_text(LOG, encoding="utf-8")
    return path


def test_level_of():
    assert level_of("2024-03-01 12:00:01 INFO web: started") == "INFO"
    assert level_of("  continuation") is None


def test_grep(log, capsys):
    assert main([str(log), "--grep", "payment"]) == 0
    assert capsys.readouterr().out.splitlines() == LOG.splitlines()[1:2] + LOG.splitlines()[3:4]


def test_ignore_case_count(log, capsys):
    assert main([str(log), "--grep", "timeout", "-i", "--count"]) == 0
    assert capsys.readouterr().out == "2\n"


def test_missing_file(tmp_path, capsys):
    assert main([str(tmp_path / "nope.log")]) == 1
    assert "cannot read" in capsys.readouterr().err
