from decimal import Decimal

from shop.lines import OrderLine
from shop.orders import Order


def largest_line(order: Order) -> OrderLine | None:
    best: OrderLine | None = None
    for line in order.lines:
        candidate: OrderLine = line
        if best is None or candidate.total() > best.total():
            best = candidate
    return best


def discounted_total(line: OrderLine, extra: Decimal) -> Decimal:
    total = line.total()
    return total - total * extra
