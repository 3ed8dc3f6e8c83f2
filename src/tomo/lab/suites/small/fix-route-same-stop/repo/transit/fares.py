"""Fares: a base fare plus a supplement for every extra zone the trip touches."""

from __future__ import annotations

from decimal import Decimal

from transit.network import Network
from transit.routes import shortest_route

BASE_FARE = Decimal("2.40")
PER_EXTRA_ZONE = Decimal("0.80")


def fare(network: Network, start: str, goal: str) -> Decimal:
    """The fare from ``start`` to ``goal`` along the fewest-stops route."""
    route = shortest_route(network, start, goal)
    # the network is connected, so there always is a route
    zones = {network.zone(stop) for stop in route}
    return BASE_FARE + PER_EXTRA_ZONE * (len(zones) - 1)
