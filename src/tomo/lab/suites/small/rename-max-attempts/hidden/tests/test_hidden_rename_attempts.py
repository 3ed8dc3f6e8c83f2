import pytest

import netclient.retry
from netclient import settings
from netclient.retry import GaveUp, backoff_delays, call_with_retry


def test_new_constant():
    assert settings.MAX_ATTEMPTS == 3


def test_defaults_use_it():
    calls = []

    def call():
        calls.append(1)
        raise TimeoutError

    with pytest.raises(GaveUp, match="3 attempts"):
        call_with_retry(call, lambda s: None)
    assert len(calls) == 3
    assert backoff_delays() == [0.5, 1.0]


def test_upper_bound_follows_it():
    with pytest.raises(ValueError, match="between 1 and 30"):
        call_with_retry(lambda: 1, lambda s: None, attempts=31)


def test_old_name_is_gone():
    assert not hasattr(settings, "MAX_TRIES")
    assert not hasattr(netclient.retry, "MAX_TRIES")
