"""Tunables of the client, in one place so operations can find them."""

MAX_TRIES = 3  # attempts per request, the first one included
BACKOFF_BASE_S = 0.5  # the wait before the second attempt; doubles after every failure
BACKOFF_CAP_S = 8.0
RETRY_STATUSES = frozenset({429, 502, 503, 504})
