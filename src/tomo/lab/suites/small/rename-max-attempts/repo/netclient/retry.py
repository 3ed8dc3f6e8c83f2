"""Retries with exponential back-off. Sleeping is injected so callers (and tests) decide how time passes."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from netclient import settings
from netclient.settings import BACKOFF_BASE_S, BACKOFF_CAP_S, MAX_TRIES

T = TypeVar("T")


class GaveUp(Exception):
    """Every attempt failed; ``__cause__`` is the last error."""


def backoff_delays(attempts: int = MAX_TRIES) -> list[float]:
    """The waits between ``attempts`` attempts: 0.5, 1.0, 2.0, ... capped at BACKOFF_CAP_S."""
    return [min(BACKOFF_BASE_S * 2**n, BACKOFF_CAP_S) for n in range(attempts - 1)]


def call_with_retry(
    call: Callable[[], T],
    sleep: Callable[[float], None],
    attempts: int = MAX_TRIES,
    retry_on: tuple[type[Exception], ...] = (ConnectionError, TimeoutError),
) -> T:
    """Run ``call`` until it succeeds, at most ``attempts`` times, sleeping between attempts."""
    if not 1 <= attempts <= settings.MAX_TRIES * 10:
        raise ValueError(f"attempts must be between 1 and {settings.MAX_TRIES * 10}, got {attempts}")
    delays = backoff_delays(attempts)
    for attempt in range(attempts):
        try:
            return call()
        except retry_on as exc:
            if attempt == attempts - 1:
                raise GaveUp(f"gave up after {attempts} attempts") from exc
            sleep(delays[attempt])
    raise AssertionError("unreachable")
