from decimal import Decimal as D

import pytest

from payslip import effective_rate, monthly_net
from tax import income_tax


@pytest.mark.parametrize(("income", "tax"), [
    ("0", "0.00"),
    ("10000", "0.00"),
    ("10000.01", "0.00"),
    ("10000.05", "0.01"),
    ("40000", "6000.00"),
    ("50000", "10000.00"),
    ("120000", "38000.00"),
    ("200000", "74000.00"),
    ("64321.50", "15728.60"),
])
def test_income_tax(income, tax):
    assert income_tax(D(income)) == D(tax)


def test_payslip_top_bracket():
    assert monthly_net(D("50000")) == D("3333.33")
    assert effective_rate(D("200000")) == D("37.0")
