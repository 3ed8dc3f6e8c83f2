"""Agents are data: a name, a model tier, a prompt, an allow-list of tools and limits. A new agent is configuration.

Agents come from ``[agents.NAME]`` tables in ``tomo.toml`` (see :class:`tomo.config.AgentSettings`). The allow-list is
checked against the registry when the agents are loaded, so a misspelt tool is a configuration error at start-up, not
a refusal the model discovers mid-run.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field

from tomo.config import AgentSettings, Settings
from tomo.errors import ConfigError
from tomo.loop import Limits
from tomo.tools import Registry

TIERS = ("fast", "balanced", "deep")


@dataclass(frozen=True, slots=True)
class Agent:
    """Who the model is asked to be and what it may touch. ``allowed`` is derived from ``tools`` (a set for the
    registry's per-call check)."""

    name: str
    tier: str = "balanced"
    prompt: str = ""
    tools: tuple[str, ...] = ()
    force_tools: bool = False
    limits: Limits = field(default_factory=Limits)
    allowed: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tools", tuple(self.tools))
        object.__setattr__(self, "allowed", frozenset(self.tools))


def agent_from_settings(name: str, settings: AgentSettings, registry: Registry, *,
                        tiers: Iterable[str] = TIERS, defaults: Limits | None = None) -> Agent:
    """Builds one agent, refusing tools the registry does not hold and tiers nobody configured."""
    known_tiers = tuple(dict.fromkeys((*TIERS, *tiers)))
    if settings.tier not in known_tiers:
        raise ConfigError(f"agent {name!r} has tier {settings.tier!r}, which is not defined",
                          hint=f"use one of {', '.join(known_tiers)}, or add it under [tiers] in tomo.toml")
    for tool in settings.tools:
        if tool not in registry:
            close = difflib.get_close_matches(tool, registry.names, n=1)
            guess = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(
                f"agent {name!r} lists unknown tool {tool!r} in [agents.{name}].tools",
                hint=f"{guess}registered tools: {', '.join(registry.names) or 'none'}",
            )
    if len(set(settings.tools)) != len(settings.tools):
        dupes = sorted({t for t in settings.tools if settings.tools.count(t) > 1})
        raise ConfigError(f"agent {name!r} lists {', '.join(dupes)} more than once", hint="list each tool once")
    limits = (defaults or Limits()).merge(max_steps=settings.max_steps, max_tool_calls=settings.max_tool_calls,
                                          max_tokens_total=settings.max_tokens_total,
                                          max_malformed=settings.max_malformed,
                                          max_reply_tokens=settings.max_reply_tokens)
    return Agent(name, settings.tier, settings.prompt, tuple(settings.tools), settings.force_tools, limits)


def load_agents(settings: Settings, registry: Registry, *, defaults: Limits | None = None) -> dict[str, Agent]:
    """Every ``[agents.NAME]`` table as an :class:`Agent`; the first bad one raises :class:`ConfigError`."""
    return {
        name: agent_from_settings(name, agent, registry, tiers=settings.tiers, defaults=defaults)
        for name, agent in settings.agents.items()
    }
