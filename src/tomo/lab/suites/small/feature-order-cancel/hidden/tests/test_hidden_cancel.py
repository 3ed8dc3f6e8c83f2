import pytest

from events import apply_event
from workflow import InvalidTransition, Order


def test_cancel_new_order():
    order = Order("o-1")
    assert order.refund_due is False
    order.cancel()
    assert order.state == "cancelled"
    assert order.refund_due is False
    assert order.history == ["new", "cancelled"]


def test_cancel_paid_order_is_refunded():
    order = Order("o-2")
    order.pay()
    order.cancel()
    assert (order.state, order.refund_due) == ("cancelled", True)


@pytest.mark.parametrize("steps", [["pay", "ship"], ["pay", "ship", "deliver"], ["cancel"]])
def test_cannot_cancel_later(steps):
    order = Order("o-3")
    for step in steps:
        getattr(order, step)()
    state = order.state
    with pytest.raises(InvalidTransition, match=f"cannot cancel order o-3: it is {state}"):
        order.cancel()
    assert order.state == state


def test_cancelled_order_cannot_move_on():
    order = Order("o-4")
    order.cancel()
    for action in (order.pay, order.ship, order.deliver):
        with pytest.raises(InvalidTransition):
            action()


def test_cancel_event():
    order = Order("o-5")
    apply_event(order, "pay")
    assert apply_event(order, " Cancel ") == "cancelled"
    assert order.refund_due is True


def test_other_orders_not_refunded():
    order = Order("o-6")
    order.pay()
    order.ship()
    assert order.refund_due is False
