"""The oi engine's prompts: the base system prompt and the opt-in directives (``--directive verify,repro``).

The directives are worded for any language and name no file or symbol of any task: they say how to work, never what
the answer is. They are Markdown files next to this module, so they can be read and changed without touching code.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tomo.errors import ConfigError

HERE = Path(__file__).resolve().parent
DIRECTIVES = ("verify", "repro")


def system_prompt(directives: Sequence[str] = (), *, base: str = "system") -> str:
    """The base prompt (``system``: the oi engine's; ``tools``: the tool loop's) followed by each named directive, in
    the order given (duplicates once)."""
    parts = [(HERE / f"{base}.md").read_text(encoding="utf-8").strip()]
    seen: set[str] = set()
    for name in directives:
        name = name.strip().lower()
        if not name or name in seen:
            continue
        if name not in DIRECTIVES:
            raise ConfigError(f"unknown directive {name!r}", hint=f"use one or more of: {', '.join(DIRECTIVES)}")
        seen.add(name)
        parts.append((HERE / f"{name}.md").read_text(encoding="utf-8").strip())
    return "\n\n".join(parts) + "\n"
