class PriceRule:
    """A rule that changes a price: a percentage off, or a fixed amount."""

    def __init__(self, percent=0, fixed=0):
        self.percent = percent
        self.fixed = fixed

    def apply(self, price):
        return price * (100 - self.percent) / 100 - self.fixed


def round_price(value, places):
    if value < 0:
        raise ValueError("price must not be negative")
    return round(value, places)
