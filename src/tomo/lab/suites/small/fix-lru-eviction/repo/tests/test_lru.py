import pytest

from lru import LRUCache


def test_put_and_get():
    cache = LRUCache(2)
    cache.put("a", 1)
    assert cache.get("a") == 1
    assert cache.get("b", "none") == "none"
    assert (cache.hits, cache.misses) == (1, 1)


def test_evicts_oldest_when_full():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.put("c", 3)
    assert "a" not in cache and len(cache) == 2


def test_rewriting_keeps_entry_fresh():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.put("a", 10)
    cache.put("c", 3)
    assert "a" in cache and "b" not in cache


def test_reading_keeps_entry_fresh():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.get("a")
    cache.put("c", 3)
    assert "a" in cache and "b" not in cache


def test_capacity_must_be_positive():
    with pytest.raises(ValueError):
        LRUCache(0)
