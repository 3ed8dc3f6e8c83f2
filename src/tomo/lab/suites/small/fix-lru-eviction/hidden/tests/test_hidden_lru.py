from lru import LRUCache


def test_read_entry_survives_eviction():
    cache = LRUCache(3)
    for key in "abc":
        cache.put(key, key.upper())
    assert cache.get("a") == "A"
    cache.put("d", "D")
    assert "a" in cache and "b" not in cache
    cache.get("c")
    cache.put("e", "E")
    assert sorted(k for k in "abcde" if k in cache) == ["c", "d", "e"]


def test_miss_does_not_change_order():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("zzz") is None
    cache.put("c", 3)
    assert "a" not in cache and "b" in cache


def test_contains_is_not_a_use():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert "a" in cache
    cache.put("c", 3)
    assert "a" not in cache


def test_get_or_build_refreshes_too():
    cache = LRUCache(2)
    built = []
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get_or_build("a", lambda k: built.append(k) or 0) == 1
    cache.put("c", 3)
    assert "a" in cache and built == []
    assert (cache.hits, cache.misses) == (1, 0)
