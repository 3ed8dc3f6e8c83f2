import pytest

from netclient import settings
from netclient.retry import GaveUp, backoff_delays, call_with_retry


def flaky(failures):
    calls = []

    def call():
        calls.append(1)
        if len(calls) <= failures:
            raise ConnectionError("reset")
        return "ok"

    return call, calls


def test_default_attempts_come_from_settings():
    call, calls = flaky(100)
    waits = []
    with pytest.raises(GaveUp):
        call_with_retry(call, waits.append)
    assert len(calls) == settings.MAX_ATTEMPTS
    assert waits == [0.5, 1.0]


def test_succeeds_after_failures():
    call, calls = flaky(2)
    assert call_with_retry(call, lambda s: None, attempts=5) == "ok"
    assert len(calls) == 3


def test_backoff_is_capped():
    assert backoff_delays(7) == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]


def test_other_errors_are_not_retried():
    def call():
        raise KeyError("x")

    with pytest.raises(KeyError):
        call_with_retry(call, lambda s: None)


def test_attempts_bounds():
    with pytest.raises(ValueError):
        call_with_retry(lambda: 1, lambda s: None, attempts=0)
