from decimal import Decimal

import pytest

from transit.fares import fare
from transit.network import Network, UnknownStop
from transit.routes import shortest_route


@pytest.fixture
def net():
    network = Network.from_lines({"A": 1, "B": 1, "C": 2, "D": 2}, [["A", "B", "C"], ["C", "A"]])
    network.add_stop("Lonely", 4)
    return network


def test_route_to_itself(net):
    assert shortest_route(net, "B", "B") == ["B"]
    assert shortest_route(net, "A", "A") == ["A"]


def test_isolated_stop_reaches_itself(net):
    assert shortest_route(net, "Lonely", "Lonely") == ["Lonely"]


def test_fare_to_same_stop_is_base_fare(net):
    assert fare(net, "C", "C") == Decimal("2.40")


def test_other_routes_unchanged(net):
    assert shortest_route(net, "B", "C") == ["B", "C"]
    assert shortest_route(net, "A", "D") is None
    with pytest.raises(UnknownStop):
        shortest_route(net, "Moon", "A")
