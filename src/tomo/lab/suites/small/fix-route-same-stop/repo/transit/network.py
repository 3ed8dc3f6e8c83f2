"""The network as an undirected graph of stops, each stop in a fare zone."""

from __future__ import annotations

from collections.abc import Iterable


class UnknownStop(KeyError):
    """A stop name that is not on the network."""


class Network:
    """Stops and the direct links between them. Neighbours keep the order in which links were added."""

    def __init__(self) -> None:
        self._links: dict[str, list[str]] = {}
        self._zones: dict[str, int] = {}

    def add_stop(self, name: str, zone: int) -> None:
        self._links.setdefault(name, [])
        self._zones[name] = zone

    def link(self, a: str, b: str) -> None:
        """Connect ``a`` and ``b`` both ways (both must already be stops)."""
        for stop in (a, b):
            if stop not in self._links:
                raise UnknownStop(stop)
        if b not in self._links[a]:
            self._links[a].append(b)
            self._links[b].append(a)

    def neighbours(self, stop: str) -> list[str]:
        return list(self._links[stop])

    def zone(self, stop: str) -> int:
        return self._zones[stop]

    def __contains__(self, stop: object) -> bool:
        return stop in self._links

    @classmethod
    def from_lines(cls, stops: dict[str, int], lines: Iterable[list[str]]) -> Network:
        """Build a network from zone numbers and lines, each line a list of consecutive stops."""
        net = cls()
        for name, zone in stops.items():
            net.add_stop(name, zone)
        for line in lines:
            for a, b in zip(line, line[1:]):
                net.link(a, b)
        return net
