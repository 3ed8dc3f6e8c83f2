from decimal import Decimal as D

import pytest

from payslip import effective_rate, monthly_net
from tax import income_tax, marginal_rate


def test_tax_free_allowance():
    assert income_tax(D("9999.99")) == D("0.00")


def test_second_bracket():
    assert income_tax(D("25000")) == D("3000.00")


def test_top_bracket():
    assert income_tax(D("50000")) == D("10000.00")


def test_negative_income():
    with pytest.raises(ValueError):
        income_tax(D("-1"))


def test_marginal_rate():
    assert [marginal_rate(D(x)) for x in ("0", "10000", "39999", "40000", "500000")] == [
        D("0"), D("0.20"), D("0.20"), D("0.40"), D("0.45")]


def test_payslip_in_second_bracket():
    assert monthly_net(D("25000")) == D("1833.33")
    assert effective_rate(D("25000")) == D("12.0")
