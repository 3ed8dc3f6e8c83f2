import pytest

from updater import needs_update, updates
from versions import is_newer


@pytest.mark.parametrize(("candidate", "current", "newer"), [
    ("1.10.0", "1.9.2", True),
    ("1.9.2", "1.10.0", False),
    ("2.0", "1.99.99", True),
    ("v2.0", "2.0.0", False),
    ("2.0.0", "v2", False),
    ("1.2.10", "1.2.9", True),
    ("0.0.1", "0.0.0", True),
    (" 3.1 ", "3.0.9", True),
])
def test_is_newer(candidate, current, newer):
    assert is_newer(candidate, current) is newer


def test_is_newer_rejects_garbage():
    with pytest.raises(ValueError):
        is_newer("latest", "1.0")


def test_needs_update_only_for_newer():
    assert needs_update("1.9.0", "1.10.0")
    assert not needs_update("1.10.0", "1.9.0")
    assert not needs_update("1.2", "1.2.0")
    assert not needs_update("v3.0.1", "3.0.1")


def test_updates_skip_downgrades():
    installed = {"alpha": "1.10.0", "beta": "0.9", "gamma": "2.0"}
    catalogue = {"alpha": "1.9.9", "beta": "0.10", "gamma": "v2.0.0"}
    assert updates(installed, catalogue) == ["beta 0.9 -> 0.10"]
