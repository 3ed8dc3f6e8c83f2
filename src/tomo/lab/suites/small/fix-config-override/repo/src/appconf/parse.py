"""Parse the INI dialect our config files use into flat ``section.key`` names."""

from __future__ import annotations


class ConfigError(ValueError):
    """A line the parser cannot read; the message names the line number."""


def parse_ini(text: str) -> dict[str, str]:
    """``[server]`` then ``port = 80`` gives ``{"server.port": "80"}``.

    Keys before any section have no prefix. Lines starting with ``#`` or ``;`` are comments. Keys are
    lower-cased; values keep their case, with surrounding whitespace removed.
    """
    values: dict[str, str] = {}
    section = ""
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip().lower()
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"line {number}: expected 'key = value', got {raw!r}")
        name = key.strip().lower()
        values[f"{section}.{name}" if section else name] = value.strip()
    return values
