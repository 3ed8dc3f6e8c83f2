import pytest

from logfilter import main

LOG = """2024-03-01 12:00:01 INFO web: started
2024-03-01 12:00:07 WARNING payment: gateway slow
  continuation of a stack trace
2024-03-01 12:00:09 ERROR payment: Timeout talking to gateway
2024-03-01 12:00:10 DEBUG web: timeout budget 30s
2024-03-01 12:00:11 CRITICAL db: disk full
"""
LINES = LOG.splitlines()


@pytest.fixture
def log(tmp_path):
    path = tmp_path / "app.log"
    path.write_text(LOG, encoding="utf-8")
    return path


def run(capsys, *argv):
    assert main(list(argv)) == 0
    return capsys.readouterr().out.splitlines()


def test_min_level_warning(log, capsys):
    assert run(capsys, str(log), "--min-level", "WARNING") == [LINES[1], LINES[3], LINES[5]]


def test_any_case(log, capsys):
    assert run(capsys, str(log), "--min-level", "error") == [LINES[3], LINES[5]]


def test_debug_keeps_every_record_but_not_other_lines(log, capsys):
    assert run(capsys, str(log), "--min-level", "Debug") == [LINES[0], LINES[1], LINES[3], LINES[4], LINES[5]]


def test_with_grep_and_count(log, capsys):
    assert run(capsys, str(log), "--grep", "timeout", "-i", "--min-level", "info") == [LINES[3]]
    assert run(capsys, str(log), "--min-level", "WARNING", "--count") == ["3"]


def test_without_flag_nothing_changes(log, capsys):
    assert run(capsys, str(log)) == LINES


def test_unknown_level_is_a_usage_error(log, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([str(log), "--min-level", "LOUD"])
    assert exit_info.value.code == 2
