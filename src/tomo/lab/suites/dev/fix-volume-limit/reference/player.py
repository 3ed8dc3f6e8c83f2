"""A music player's volume control."""

from __future__ import annotations

MIN_VOLUME = 0
MAX_VOLUME = 100


def clamp(value: int, low: int, high: int) -> int:
    """``value`` held within ``low`` and ``high`` (both included)."""
    return max(low, min(value, high))


class Player:
    def __init__(self, volume: int = 30) -> None:
        self.volume = clamp(volume, MIN_VOLUME, MAX_VOLUME)
        self.muted = False

    def set_volume(self, value: int) -> None:
        self.volume = clamp(value, MIN_VOLUME, MAX_VOLUME)

    def louder(self, step: int = 10) -> None:
        self.set_volume(self.volume + step)

    def quieter(self, step: int = 10) -> None:
        self.set_volume(self.volume - step)

    def toggle_mute(self) -> None:
        self.muted = not self.muted
