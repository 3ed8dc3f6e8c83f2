import pytest

from csvsum import main, read_column

DATA = "date,category,amount\n2024-01-02,travel,12.50\n2024-01-03,food,8.25\n2024-01-04,travel,\n2024-01-05,travel,30\n"


@pytest.fixture
def expenses(tmp_path):
    path = tmp_path / "expenses.csv"
    path.write_text(DATA, encoding="utf-8")
    return path


def test_read_column(expenses):
    assert [str(v) for v in read_column(expenses, "amount")] == ["12.50", "8.25", "30"]


def test_main_sums(expenses, capsys):
    assert main([str(expenses), "--column", "amount"]) == 0
    assert capsys.readouterr().out == "50.75\n"


def test_main_where(expenses, capsys):
    assert main([str(expenses), "-c", "amount", "--where", "category=travel"]) == 0
    assert capsys.readouterr().out == "42.50\n"


def test_unknown_column(expenses, capsys):
    assert main([str(expenses), "-c", "price"]) == 1
    assert "no column 'price'" in capsys.readouterr().err
