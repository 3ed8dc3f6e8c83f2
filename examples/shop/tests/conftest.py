from decimal import Decimal

import pytest
from shop.catalog import Product
from shop.lines import OrderLine
from shop.orders import Order


@pytest.fixture
def pen() -> Product:
    return Product("P-1", "pen", Decimal("1.50"))


@pytest.fixture
def line(pen: Product) -> OrderLine:
    return OrderLine(pen, 4)


@pytest.fixture
def order(pen: Product) -> Order:
    order = Order("A-1")
    order.add(pen, 2)
    order.add(Product("B-7", "book", Decimal("12.00")), 1)
    return order
