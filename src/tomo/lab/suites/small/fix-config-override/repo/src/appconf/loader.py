"""Merging config layers: the same key in a later layer wins over earlier ones."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from appconf.parse import parse_ini


def merge_layers(layers: Iterable[Mapping[str, str]]) -> dict[str, str]:
    """Merge ``layers``, lowest priority first: a key set again in a later layer overrides the earlier value."""
    merged: dict[str, str] = {}
    for layer in layers:
        for key, value in layer.items():
            if key not in merged:
                merged[key] = value
    return merged


def load(paths: Iterable[Path]) -> dict[str, str]:
    """Read the files that exist among ``paths`` (defaults first, local overrides last) and merge them."""
    layers = [parse_ini(path.read_text(encoding="utf-8")) for path in paths if path.exists()]
    return merge_layers(layers)
