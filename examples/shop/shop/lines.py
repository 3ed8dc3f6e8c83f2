from dataclasses import dataclass
from decimal import Decimal

from shop.catalog import Product


@dataclass
class OrderLine:
    product: Product
    quantity: int
    discount: Decimal = Decimal("0")

    def total(self) -> Decimal:
        """Price times quantity, less the line's discount."""
        gross = self.product.price * self.quantity
        return gross - gross * self.discount
