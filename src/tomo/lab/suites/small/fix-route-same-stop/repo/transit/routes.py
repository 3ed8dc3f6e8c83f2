"""Route finding: the route with the fewest stops (breadth-first search)."""

from __future__ import annotations

from collections import deque

from transit.network import Network, UnknownStop


def shortest_route(network: Network, start: str, goal: str) -> list[str] | None:
    """The stops of a fewest-stops route from ``start`` to ``goal``, both included; None if ``goal`` is unreachable.

    Among equally short routes, the one through the earliest-linked neighbours wins, so answers are stable.
    """
    for stop in (start, goal):
        if stop not in network:
            raise UnknownStop(stop)
    previous: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        stop = queue.popleft()
        for nxt in network.neighbours(stop):
            if nxt in previous:
                continue
            previous[nxt] = stop
            if nxt == goal:
                return _walk_back(previous, goal)
            queue.append(nxt)
    return None


def _walk_back(previous: dict[str, str | None], goal: str) -> list[str]:
    route = [goal]
    while (before := previous[route[-1]]) is not None:
        route.append(before)
    return route[::-1]
