from dataclasses import dataclass, field
from decimal import Decimal

from shop.catalog import Product
from shop.lines import OrderLine


@dataclass
class Order:
    number: str
    lines: list[OrderLine] = field(default_factory=list)

    def add(self, product: Product, quantity: int = 1) -> OrderLine:
        line = OrderLine(product, quantity)
        self.lines.append(line)
        return line

    def total(self) -> Decimal:
        return sum((self.line_total(line) for line in self.lines), Decimal("0"))

    @staticmethod
    def line_total(line: OrderLine) -> Decimal:
        return line.total()
