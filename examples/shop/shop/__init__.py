"""A tiny order book, small enough to read in a minute and real enough to refactor."""

from shop.catalog import Product
from shop.lines import OrderLine
from shop.orders import Order

__all__ = ["Order", "OrderLine", "Product"]
