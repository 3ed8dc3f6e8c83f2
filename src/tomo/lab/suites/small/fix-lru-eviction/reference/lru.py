"""A small least-recently-used cache for rendered thumbnails (and anything else that is costly to rebuild)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRUCache(Generic[K, V]):
    """At most ``capacity`` entries; when full, the entry that was used longest ago goes.

    "Used" means read with ``get`` or written with ``put``. ``in`` and ``len`` only look, they do not count as use.
    """

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity}")
        self.capacity = capacity
        self.hits = 0
        self.misses = 0
        self._data: OrderedDict[K, V] = OrderedDict()  # oldest use first

    def get(self, key: K, default: V | None = None) -> V | None:
        """The value for ``key``, or ``default`` when it is not cached."""
        if key in self._data:
            self.hits += 1
            self._data.move_to_end(key)
            return self._data[key]
        self.misses += 1
        return default

    def put(self, key: K, value: V) -> None:
        """Store ``value`` under ``key``, evicting the least recently used entry if the cache is over capacity."""
        if key in self._data:
            self._data.move_to_end(key)
        self._data[key] = value
        if len(self._data) > self.capacity:
            self._data.popitem(last=False)

    def get_or_build(self, key: K, build: Callable[[K], V]) -> V:
        """The cached value for ``key``, building and storing it first when it is missing."""
        if key in self._data:
            return self.get(key)  # type: ignore[return-value]
        value = build(key)
        self.misses += 1
        self.put(key, value)
        return value

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __len__(self) -> int:
        return len(self._data)
