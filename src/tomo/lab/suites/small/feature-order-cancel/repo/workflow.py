"""The life of an order: new -> paid -> shipped -> delivered. Every move is checked against the table below."""

from __future__ import annotations


class InvalidTransition(Exception):
    """The order cannot make this move from its current state."""


# action -> (states it is allowed from, state it leads to)
TRANSITIONS: dict[str, tuple[frozenset[str], str]] = {
    "pay": (frozenset({"new"}), "paid"),
    "ship": (frozenset({"paid"}), "shipped"),
    "deliver": (frozenset({"shipped"}), "delivered"),
}


class Order:
    def __init__(self, order_id: str) -> None:
        self.order_id = order_id
        self.state = "new"
        self.history: list[str] = ["new"]

    def _move(self, action: str) -> None:
        allowed_from, target = TRANSITIONS[action]
        if self.state not in allowed_from:
            raise InvalidTransition(f"cannot {action} order {self.order_id}: it is {self.state}")
        self.state = target
        self.history.append(target)

    def pay(self) -> None:
        self._move("pay")

    def ship(self) -> None:
        self._move("ship")

    def deliver(self) -> None:
        self._move("deliver")
