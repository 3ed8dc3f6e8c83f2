"""The plain-text stock report that is mailed to the warehouse every morning."""

from __future__ import annotations

from inventory.stock import Inventory


def render_report(inventory: Inventory) -> str:
    """A header line, then one 'SKU  quantity' line per SKU, sorted by SKU."""
    lines = ["Stock report"]
    for sku in inventory.skus():
        lines.append(f"{sku:<10}{inventory.quantity(sku):>6}")
    return "\n".join(lines)
