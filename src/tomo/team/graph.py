"""The task graph as data: stages in order, the workers of a stage in parallel, a merge between stages.

A graph is plain frozen dataclasses so the same graph runs on either backend and can be stored with its job
(:meth:`TaskGraph.to_dict`) and rebuilt by ``resume`` in another process. Merge functions are stored by name
(:data:`MERGES`); a graph with a merge function of its own must be handed to ``resume`` again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tomo.errors import ConfigError


@dataclass(frozen=True, slots=True)
class Worker:
    """One model run inside a stage.

    ``model`` is a spec or a tier; ``None`` takes the role's model from the roles map, then the primary model.
    ``prompt`` replaces the role's prompt. ``max_tokens`` caps each reply of this worker. ``agent`` names an
    ``[agents.NAME]`` table whose prompt, tools and limits the worker uses (its tools run through the loop).
    ``code=True`` runs the code engine on the task in the worker's own git worktree of the job's workspace.
    """

    role: str
    model: str | None = None
    prompt: str | None = None
    max_tokens: int | None = None
    agent: str | None = None
    code: bool = False

    @property
    def label(self) -> str:
        return f"@{self.agent}" if self.agent else self.role

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "model": self.model, "prompt": self.prompt, "max_tokens": self.max_tokens,
                "agent": self.agent, "code": self.code}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Worker:
        return cls(str(data["role"]), data.get("model"), data.get("prompt"), data.get("max_tokens"),
                   data.get("agent"), bool(data.get("code", False)))


@dataclass(frozen=True, slots=True)
class WorkerOutput:
    """What a merge function sees of one finished worker."""

    index: int
    role: str
    output: str


Merge = Callable[[Sequence[WorkerOutput]], str]


def merge_under_headers(outputs: Sequence[WorkerOutput]) -> str:
    """The default merge: each worker's output under a ``## role`` header, in the order the stage lists them.

    A role that appears twice is numbered (``## implementer 2``) so the next stage can tell the two apart.
    """
    counts: dict[str, int] = {}
    for out in outputs:
        counts[out.role] = counts.get(out.role, 0) + 1
    seen: dict[str, int] = {}
    parts = []
    for out in outputs:
        seen[out.role] = seen.get(out.role, 0) + 1
        header = out.role if counts[out.role] == 1 else f"{out.role} {seen[out.role]}"
        parts.append(f"## {header}\n\n{out.output.strip()}")
    return "\n\n".join(parts)


def merge_concat(outputs: Sequence[WorkerOutput]) -> str:
    """Outputs one after the other, separated by a blank line, with no headers."""
    return "\n\n".join(out.output.strip() for out in outputs)


MERGES: dict[str, Merge] = {"headers": merge_under_headers, "concat": merge_concat}


def merge_name(merge: Merge) -> str:
    for name, known in MERGES.items():
        if known is merge:
            return name
    return f"custom:{getattr(merge, '__qualname__', repr(merge))}"


@dataclass(frozen=True, slots=True)
class Stage:
    name: str
    workers: tuple[Worker, ...]
    merge: Merge = merge_under_headers

    def __post_init__(self) -> None:
        object.__setattr__(self, "workers", tuple(self.workers))
        if not self.workers:
            raise ConfigError(f"stage {self.name!r} has no workers", hint="give every stage at least one role")


@dataclass(frozen=True, slots=True)
class TaskGraph:
    """``budget`` is the job's total of input+output tokens (``None``: no ceiling)."""

    job_id: str
    stages: tuple[Stage, ...]
    budget: int | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "stages", tuple(self.stages))
        if not self.stages:
            raise ConfigError("the task graph has no stages",
                              hint='give stages, e.g. "plan:planner | build:implementer"')
        if not self.job_id or not _JOB_ID.fullmatch(self.job_id):
            raise ConfigError(f"job id {self.job_id!r} is not usable",
                              hint="use 1-100 letters, digits, '.', '_' or '-', starting with a letter or digit")
        if self.budget is not None and self.budget < 1:
            raise ConfigError(f"the budget must be a positive number of tokens, not {self.budget}",
                              hint="give --budget N with N >= 1, or no budget")
        names = [s.name for s in self.stages]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ConfigError(f"stage name(s) used twice: {', '.join(dupes)}", hint="give each stage its own name")

    def to_dict(self) -> dict[str, Any]:
        return {"version": 1, "budget": self.budget, "meta": dict(self.meta),
                "stages": [{"name": s.name, "merge": merge_name(s.merge), "workers": [w.to_dict() for w in s.workers]}
                           for s in self.stages]}

    @classmethod
    def from_dict(cls, job_id: str, data: Mapping[str, Any], merges: Mapping[str, Merge] | None = None) -> TaskGraph:
        """Rebuilds a stored graph; a stage whose merge is not a known name needs ``merges`` to supply it."""
        known = {**MERGES, **(merges or {})}
        stages = []
        for s in data["stages"]:
            name = s.get("merge", "headers")
            if name not in known:
                raise ConfigError(f"stage {s['name']!r} of job {job_id} was merged by {name!r}, which this process "
                                  "does not know", hint="resume it from the program that defined the merge "
                                  "(pass the graph to resume)")
            stages.append(Stage(s["name"], tuple(Worker.from_dict(w) for w in s["workers"]), known[name]))
        return cls(job_id, tuple(stages), data.get("budget"), dict(data.get("meta") or {}))


_JOB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")


def parse_stages(text: str) -> tuple[Stage, ...]:
    """``"plan:planner | build:implementer,tester | review:reviewer"`` -> stages. ``@NAME`` names an agent; a role
    written ``implementer*2`` runs two workers of that role in the stage."""
    stages = []
    for number, chunk in enumerate(text.split("|"), 1):
        chunk = chunk.strip()
        name, colon, roles = chunk.partition(":")
        name, roles = name.strip(), roles.strip()
        if not colon or not name or not roles:
            raise ConfigError(f"stage {number} ({chunk!r}) is not NAME:ROLE[,ROLE...]",
                              hint='write e.g. --stages "plan:planner | build:implementer,tester | review:reviewer"')
        if not _NAME.fullmatch(name):
            raise ConfigError(f"stage name {name!r} is not usable", hint="use letters, digits, '_' or '-'")
        workers: list[Worker] = []
        for token in (t.strip() for t in roles.split(",")):
            base, star, count = token.partition("*")
            base = base.strip()
            times = 1
            if star:
                if not count.strip().isdigit() or not 1 <= int(count) <= 32:
                    raise ConfigError(f"{token!r} in stage {name!r}: the count after '*' must be 1 to 32",
                                      hint="write e.g. implementer*2")
                times = int(count)
            agent = base[1:] if base.startswith("@") else None
            role = agent or base
            if not _NAME.fullmatch(role):
                raise ConfigError(f"role {token!r} in stage {name!r} is not a name",
                                  hint="roles and agents are letters, digits, '_' or '-' (an agent starts with @)")
            workers.extend(Worker(role, agent=agent) for _ in range(times))
        stages.append(Stage(name, tuple(workers)))
    return tuple(stages)


def describe(stages: Sequence[Stage]) -> str:
    """The inverse of :func:`parse_stages`, for messages and ``show``."""
    return " | ".join(f"{s.name}:{','.join(w.label for w in s.workers)}" for s in stages)
