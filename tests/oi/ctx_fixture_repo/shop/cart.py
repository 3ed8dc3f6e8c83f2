from shop.pricing import round_price


class Cart:
    """Items a customer is about to buy."""

    def __init__(self):
        self.items = []
        self.discount = 0.0

    def add_item(self, name, price, quantity=1):
        self.items.append((name, price, quantity))

    def total(self):
        gross = sum(price * quantity for _name, price, quantity in self.items)
        return round_price(gross - self.discount, 2)

    def clear(self):
        self.items = []


def apply_discount(cart, amount):
    cart.discount = amount
    return cart.total()
