"""Roles: the built-in prompts, their overrides in tomo.toml, and which model each role runs on.

Why a roles map and not a model per worker: the user thinks "the planner can be fast, the implementer must be
deep", so a role names a tier (``fast``/``balanced``/``deep``, resolved through the gateway's tier table) or a spec;
a role the map does not name runs on the primary model. ``[team.roles.NAME]`` in tomo.toml may set ``prompt`` and
``model`` for a role, built-in or new; ``--roles role=tier,...`` on the command line wins over the file.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tomo.config import Settings
from tomo.errors import ConfigError
from tomo.models.base import Model
from tomo.models.gateway import TIERS, detect_default_model, model_from_spec, split_spec, tier_table
from tomo.team.graph import Stage, describe

ROLE_PROMPTS: dict[str, str] = {
    "planner": (
        "You are the planner of a small team working on a code base. Read the request and write a short, numbered "
        "plan: the steps, the files or parts each step touches, and how the result will be checked. Do not write "
        "the code. Name open questions instead of guessing."
    ),
    "researcher": (
        "You are the researcher of a small team. From the request and the plan, find what the others need to "
        "know: the relevant code, APIs, constraints and risks. Report facts with where they come from; say plainly "
        "what you could not find. Do not change anything."
    ),
    "implementer": (
        "You are the implementer of a small team. Carry out the plan you are given: write the change as complete "
        "code or a unified diff, one file at a time, and say which step of the plan each part serves. Keep the "
        "change as small as the plan allows."
    ),
    "tester": (
        "You are the tester of a small team. From the plan and the change, write the tests that would prove it "
        "works and the cases most likely to break it; say how to run them. Report a problem with the exact input "
        "that shows it."
    ),
    "reviewer": (
        "You are the reviewer of a small team. Review the work you are given against the request: correctness, "
        "missing cases, tests, clarity. End with a verdict line, APPROVE or CHANGES, followed by the changes "
        "that are required (not nice-to-haves)."
    ),
}

GENERIC_PROMPT = (
    "You are the {role} of a small team working on a code base. Do your part of the request with the input you are "
    "given, and report the result plainly."
)


@dataclass(frozen=True, slots=True)
class RoleConfig:
    prompt: str | None = None
    model: str | None = None
    code: bool = False


@dataclass(frozen=True, slots=True)
class TeamSettings:
    """The ``[team]`` table: role overrides, defaults for the CLI, and for the DBOS backend the concurrency per
    provider across every process (``[team.concurrency] anthropic = 4``) and per process (``worker_concurrency``)."""

    roles: Mapping[str, RoleConfig] = field(default_factory=dict)
    concurrency: Mapping[str, int] = field(default_factory=dict)
    budget: int | None = None
    stages: str | None = None
    worker_concurrency: int | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> TeamSettings:
        data = settings.section("team")
        known = {"roles", "concurrency", "budget", "stages", "worker_concurrency"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"[team] in tomo.toml has unknown key(s): {', '.join(unknown)}",
                              hint=f"[team] takes {', '.join(sorted(known))}")
        roles: dict[str, RoleConfig] = {}
        for name, table in (data.get("roles") or {}).items():
            if not isinstance(table, dict) or set(table) - {"prompt", "model", "code"}:
                raise ConfigError(f"[team.roles.{name}] must be a table with prompt, model and/or code",
                                  hint=f'write [team.roles.{name}] then prompt = "..." and model = "fast"')
            roles[name] = RoleConfig(_str(table.get("prompt"), f"team.roles.{name}.prompt"),
                                     _str(table.get("model"), f"team.roles.{name}.model"), bool(table.get("code")))
        concurrency: dict[str, int] = {}
        for provider, value in (data.get("concurrency") or {}).items():
            if not isinstance(value, int) or value < 1:
                raise ConfigError(f"[team.concurrency] {provider} = {value!r} is not a positive whole number",
                                  hint=f"write {provider} = 4")
            concurrency[provider] = value
        budget = data.get("budget")
        if budget is not None and (not isinstance(budget, int) or budget < 1):
            raise ConfigError(f"[team] budget = {budget!r} is not a positive number of tokens", hint="budget = 200000")
        per_process = data.get("worker_concurrency")
        if per_process is not None and (not isinstance(per_process, int) or per_process < 1):
            raise ConfigError(f"[team] worker_concurrency = {per_process!r} is not a positive whole number",
                              hint="worker_concurrency = 2")
        return cls(roles, concurrency, budget, _str(data.get("stages"), "team.stages"), per_process)

    def prompt_for(self, role: str) -> str:
        configured = self.roles.get(role)
        if configured and configured.prompt:
            return configured.prompt
        return ROLE_PROMPTS.get(role) or GENERIC_PROMPT.format(role=role)


def _str(value: Any, key: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{key} in tomo.toml must be a non-empty string, not {value!r}", hint=f'{key} = "..."')
    return value.strip()


def parse_roles(text: str) -> dict[str, str]:
    """``"planner=fast,implementer=claude:claude-sonnet-4-5"`` -> a roles map (the value is a tier or a spec)."""
    roles: dict[str, str] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        role, eq, target = item.partition("=")
        role, target = role.strip(), target.strip()
        if not eq or not role or not target:
            raise ConfigError(f"--roles entry {item!r} is not ROLE=TIER_OR_SPEC",
                              hint="write e.g. --roles planner=fast,implementer=deep")
        roles[role] = target
    return roles


def check_roles(roles: Mapping[str, str], stages: Sequence[Stage]) -> None:
    """Refuses a ``--roles`` entry for a role that no worker of the graph has, before any work is done.

    Why: the map is only looked up by the graph's roles, so ``implementor=deep`` (a typo, or a role of another graph)
    was never read and the job ran the implementer on the primary model, the opposite of what was asked. Only the
    command line's map is checked: ``[team.roles.NAME]`` in tomo.toml serves every graph, so it may name more roles.
    """
    present = list(dict.fromkeys(worker.role for stage in stages for worker in stage.workers))
    unknown = [role for role in roles if role not in present]
    if not unknown:
        return
    guesses = [f"{match[0]} for {role}" if len(unknown) > 1 else match[0] for role in unknown
               if (match := difflib.get_close_matches(role, present, n=1, cutoff=0.6))]
    said = ", ".join(repr(role) for role in unknown)
    raise ConfigError(
        f"--roles names {'a role' if len(unknown) == 1 else 'roles'} no worker of this job has: {said} "
        f"(stages: {describe(stages)})",
        hint=(f"did you mean {', '.join(guesses)}? " if guesses else "")
        + f"the roles here are {', '.join(present)}; map only those, or add the role to --stages")


ModelFactory = Callable[[str, Settings], Model]


def _default_factory(spec: str, settings: Settings) -> Model:
    return model_from_spec(spec, settings)


class ModelChooser:
    """Role -> spec (explicit worker model, else the roles map, else the primary), tier -> spec through the gateway.

    The primary model is detected only when some role needs it, so a run whose roles are all mapped never probes
    Ollama. ``factory`` builds a fresh model per worker (a scripted model starts at its first reply each time).
    """

    def __init__(self, settings: Settings, *, primary: str | None = None, roles: Mapping[str, str] | None = None,
                 team: TeamSettings | None = None, factory: ModelFactory | None = None) -> None:
        self.settings = settings
        self._primary = primary or settings.model
        self.team = team or TeamSettings()
        configured = {name: conf.model for name, conf in self.team.roles.items() if conf.model}
        self.roles: dict[str, str] = {**configured, **(roles or {})}
        self._factory = factory or _default_factory
        self._tiers: dict[str, str] | None = None

    @property
    def primary(self) -> str:
        if self._primary is None:
            self._primary = detect_default_model(self.settings)
        return self._primary

    def spec_for(self, role: str, explicit: str | None = None) -> tuple[str, str]:
        """``(spec, why)``: the model this role runs on and where that choice came from."""
        if explicit:
            return self._resolve(explicit), "the worker's own model"
        if role in self.roles:
            return self._resolve(self.roles[role]), f"roles map: {role}={self.roles[role]}"
        return self._resolve(self.primary), "the primary model (the roles map names none for this role)"

    def _resolve(self, target: str) -> str:
        if target in TIERS or target in self.settings.tiers:
            if target in self.settings.tiers:
                return self.settings.tiers[target]
            if self._tiers is None:
                self._tiers = {t: spec for t, (spec, _) in tier_table(self.settings, default_spec=self.primary).items()}
            return self._tiers[target]
        provider, name = split_spec(target)  # a malformed spec is a ConfigError here, before any worker runs
        if provider == "scripted" and not Path(name).is_absolute():
            return f"scripted:{Path(name).resolve()}"  # another process (a resume, a DBOS worker) may run elsewhere
        return target

    def model(self, spec: str) -> Model:
        return self._factory(spec, self.settings)


def provider_of(spec: str) -> str:
    """The provider a spec talks to (the DBOS backend keeps one queue, and one concurrency limit, per provider)."""
    return split_spec(spec)[0]
