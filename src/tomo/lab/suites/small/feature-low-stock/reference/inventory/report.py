"""The plain-text stock report that is mailed to the warehouse every morning."""

from __future__ import annotations

from inventory.stock import Inventory


def render_report(inventory: Inventory, low_stock_threshold: int = 5) -> str:
    """A header line, one 'SKU  quantity' line per SKU sorted by SKU, then the SKUs that run low."""
    lines = ["Stock report"]
    for sku in inventory.skus():
        lines.append(f"{sku:<10}{inventory.quantity(sku):>6}")
    low = inventory.low_stock(low_stock_threshold)
    lines.append(f"Low stock: {', '.join(low) if low else 'none'}")
    return "\n".join(lines)
