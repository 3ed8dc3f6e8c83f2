"""Applies events from the shop's message queue to orders."""

from __future__ import annotations

from collections.abc import Callable

from workflow import Order

HANDLERS: dict[str, Callable[[Order], None]] = {
    "pay": Order.pay,
    "ship": Order.ship,
    "deliver": Order.deliver,
}


def apply_event(order: Order, event: str) -> str:
    """Apply ``event`` (a handler name, any case) to ``order`` and return the new state."""
    try:
        handler = HANDLERS[event.strip().lower()]
    except KeyError:
        raise ValueError(f"unknown event {event!r}; expected one of {', '.join(HANDLERS)}") from None
    handler(order)
    return order.state
