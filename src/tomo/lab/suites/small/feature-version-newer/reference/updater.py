"""Decides which plugins the update check offers to upgrade."""

from __future__ import annotations

from collections.abc import Mapping

from versions import is_newer


def needs_update(installed: str, available: str) -> bool:
    """Whether the ``available`` version should replace the ``installed`` one: only when it is newer."""
    return is_newer(available, installed)


def updates(installed: Mapping[str, str], catalogue: Mapping[str, str]) -> list[str]:
    """The installed plugins that have an update in ``catalogue``, as 'name old -> new' lines, sorted by name."""
    return [
        f"{name} {installed[name]} -> {catalogue[name]}"
        for name in sorted(installed)
        if name in catalogue and needs_update(installed[name], catalogue[name])
    ]
