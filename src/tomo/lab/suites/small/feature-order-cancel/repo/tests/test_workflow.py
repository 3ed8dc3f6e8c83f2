import pytest

from events import apply_event
from workflow import InvalidTransition, Order


def test_happy_path():
    order = Order("o-1")
    for event, state in (("pay", "paid"), ("SHIP", "shipped"), (" deliver ", "delivered")):
        assert apply_event(order, event) == state
    assert order.history == ["new", "paid", "shipped", "delivered"]


def test_cannot_ship_unpaid():
    order = Order("o-2")
    with pytest.raises(InvalidTransition, match="cannot ship order o-2: it is new"):
        order.ship()
    assert order.state == "new"


def test_unknown_event():
    with pytest.raises(ValueError, match="unknown event"):
        apply_event(Order("o-3"), "teleport")
