"""The web console: ``create_app(store)`` is the ASGI app ``tomo serve`` runs (see docs/console.md)."""

from __future__ import annotations

from tomo.web.app import create_app

__all__ = ["create_app"]
