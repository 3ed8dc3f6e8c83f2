"""Shipping labels for the parcel printer."""

from __future__ import annotations

from addresses import Address, fmt_addr

LABEL_WIDTH = 40


def shipping_label(order_id: str, to: Address, sender: Address) -> str:
    """The sender's address in one line, a rule, the recipient's full address, and the order id."""
    rule = "-" * LABEL_WIDTH
    sender_line = fmt_addr(sender).replace("\n", ", ")
    return "\n".join([sender_line[:LABEL_WIDTH], rule, fmt_addr(to), rule, f"Order {order_id}"])
