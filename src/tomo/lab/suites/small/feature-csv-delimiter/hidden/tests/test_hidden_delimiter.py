import pytest

from csvsum import main, read_column

SEMI = "date;category;amount\n2024-01-02;travel;12.50\n2024-01-03;food;8.25\n2024-01-05;travel;30\n"


@pytest.fixture
def semicolons(tmp_path):
    path = tmp_path / "export.csv"
    path.write_text(SEMI, encoding="utf-8")
    return path


def test_long_flag(semicolons, capsys):
    assert main([str(semicolons), "--column", "amount", "--delimiter", ";"]) == 0
    assert capsys.readouterr().out == "50.75\n"


def test_short_flag_with_where(semicolons, capsys):
    assert main([str(semicolons), "-c", "amount", "-d", ";", "--where", "category=travel"]) == 0
    assert capsys.readouterr().out == "42.50\n"


def test_tab_separated(tmp_path, capsys):
    path = tmp_path / "data.tsv"
    path.write_text("name\tamount\nx\t1.5\ny\t2\n", encoding="utf-8")
    assert main([str(path), "-c", "amount", "--delimiter", "\t"]) == 0
    assert capsys.readouterr().out == "3.5\n"


def test_read_column_keyword(semicolons):
    assert [str(v) for v in read_column(semicolons, "amount", delimiter=";")] == ["12.50", "8.25", "30"]


def test_comma_is_still_the_default(tmp_path, capsys):
    path = tmp_path / "plain.csv"
    path.write_text("amount\n1\n2\n", encoding="utf-8")
    assert main([str(path), "-c", "amount"]) == 0
    assert capsys.readouterr().out == "3\n"


def test_wrong_delimiter_reports_missing_column(semicolons, capsys):
    assert main([str(semicolons), "-c", "amount"]) == 1
    assert "no column 'amount'" in capsys.readouterr().err
