"""A tiny shop back end: carts and their prices."""

from shop.cart import Cart
from shop.pricing import cart_total

__all__ = ["Cart", "cart_total"]
