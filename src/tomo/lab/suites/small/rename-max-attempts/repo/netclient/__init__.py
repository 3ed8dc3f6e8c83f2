"""A retrying client for the inventory service's HTTP API (transport injected, so tests need no network)."""
