class Stock:
    """How many units of each product the warehouse holds, and how many are reserved for open orders."""

    def __init__(self):
        self.units = {}
        self.reserved = {}

    def receive(self, product, units):
        self.units[product] = self.units.get(product, 0) + units

    def reserve(self, product, units):
        # the stock count may go below zero here: reserved units are not checked against the warehouse
        self.reserved[product] = self.reserved.get(product, 0) + units
        self.units[product] = self.units.get(product, 0) - units

    def release(self, product, units):
        self.reserved[product] -= units
        self.units[product] += units
