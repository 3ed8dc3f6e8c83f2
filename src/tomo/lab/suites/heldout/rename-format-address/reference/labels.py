"""Shipping labels for the parcel printer."""

from __future__ import annotations

from addresses import Address, format_address

LABEL_WIDTH = 40


def shipping_label(order_id: str, to: Address, sender: Address) -> str:
    """The sender's address in one line, a rule, the recipient's full address, and the order id."""
    rule = "-" * LABEL_WIDTH
    sender_line = format_address(sender).replace("\n", ", ")
    return "\n".join([sender_line[:LABEL_WIDTH], rule, format_address(to), rule, f"Order {order_id}"])
