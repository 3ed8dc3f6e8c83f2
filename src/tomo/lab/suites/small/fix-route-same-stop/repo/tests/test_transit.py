from decimal import Decimal

import pytest

from transit.fares import fare
from transit.network import Network, UnknownStop
from transit.routes import shortest_route


@pytest.fixture
def net():
    stops = {"Central": 1, "Market": 1, "Park": 2, "Harbour": 2, "Airport": 3, "Depot": 3}
    lines = [["Central", "Market", "Park", "Airport"], ["Central", "Harbour", "Airport"]]
    network = Network.from_lines(stops, lines)
    network.add_stop("Island", 3)
    return network


def test_fewest_stops(net):
    assert shortest_route(net, "Central", "Airport") == ["Central", "Harbour", "Airport"]


def test_neighbours(net):
    assert shortest_route(net, "Market", "Central") == ["Market", "Central"]


def test_unreachable(net):
    assert shortest_route(net, "Central", "Island") is None


def test_unknown_stop(net):
    with pytest.raises(UnknownStop):
        shortest_route(net, "Central", "Moon")


def test_fare_counts_zones(net):
    assert fare(net, "Central", "Airport") == Decimal("4.00")
    assert fare(net, "Central", "Market") == Decimal("2.40")
