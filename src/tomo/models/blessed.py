"""The blessed list: the models tomo picks by itself, because the lab measured them doing real tasks.

``blessed.json`` beside this module is data, written by ``tomo lab bless`` from lab runs (never by hand): for each
measured model its suite, tasks solved of tasks tried, the suite's ceiling (what a strong model solves), how often it
claimed a success the oracle refuted, and whether it passed the rule written in the file. ``TOMO_BLESSED=PATH``
reads another file (a lab run of your own). Reading never fails: a missing or malformed file is an empty list and a
note that says what was wrong and how to regenerate it, so a broken file costs detection its preference, not tomo its
start-up.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

BLESSED_FILE = Path(__file__).with_name("blessed.json")
BLESSED_ENV = "TOMO_BLESSED"
REGENERATE = "regenerate it with `tomo lab bless` (or unset TOMO_BLESSED to use the list tomo ships)"


class _Data(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Ceiling(_Data):
    solved: int = Field(ge=0)
    tasks: int = Field(ge=0)


class SuiteRecord(_Data):
    variant: str
    ceiling: Ceiling


class Aliases(_Data):
    ollama: str | None = None  # the name `ollama list` shows (name:tag)
    local: str | None = None  # the model id an OpenAI-compatible server serves it under (tomo models serve NAME)


class Measured(_Data):
    """One model's figures from one suite."""

    name: str
    spec: str
    aliases: Aliases = Field(default_factory=Aliases)
    suite: str
    variant: str
    solved: int = Field(ge=0)
    tasks: int = Field(ge=0)
    rate: float = Field(ge=0)
    ceiling_rate: float = Field(ge=0)
    false_claims: int = Field(ge=0)
    blessed: bool


class BlessedFile(_Data):
    generated: datetime
    machine: str
    tomo_version: str
    rule: str
    suites: dict[str, SuiteRecord]
    models: list[Measured]


@dataclass(frozen=True, slots=True)
class Blessed:
    """What the file said (``data``), or why it said nothing usable (``note``)."""

    source: Path
    data: BlessedFile | None = None
    note: str = ""
    measured: list[Measured] = field(default_factory=list)

    @property
    def ranked(self) -> list[Measured]:
        """The blessed models, best first: highest solve rate, then fewest false claims, then the file's order."""
        chosen = [m for m in self.measured if m.blessed]
        return sorted(chosen, key=lambda m: (-m.rate, m.false_claims))

    def ceiling(self, model: Measured) -> str:
        """The suite's ceiling as ``solved/tasks`` when the file records it, else as the model's ceiling rate."""
        suite = self.data.suites.get(model.suite) if self.data else None
        return f"{suite.ceiling.solved}/{suite.ceiling.tasks}" if suite else f"{model.ceiling_rate:.0%}"

    def figures(self, model: Measured) -> str:
        """``solved 14/20 of small (ceiling 18/20), 0 false claim(s), measured 2025-06-01 on MACHINE``."""
        when = f", measured {self.data.generated:%Y-%m-%d} on {self.data.machine}" if self.data else ""
        return (f"solved {model.solved}/{model.tasks} of {model.suite} (ceiling {self.ceiling(model)}), "
                f"{model.false_claims} false claim(s){when}")

    def summary(self) -> str:
        """One line for people: when and where it was measured, or why there is nothing."""
        if self.data is None:
            return self.note
        when = f"{self.data.generated:%Y-%m-%d}"
        count = sum(1 for m in self.measured if m.blessed)
        head = f"{count} of {len(self.measured)} measured model(s) blessed, measured {when} on {self.data.machine}"
        return f"{head} (tomo {self.data.tomo_version}); rule: {self.data.rule}"

    def pick_ollama(self, installed: Iterable[str]) -> tuple[Measured, str] | None:
        """The best blessed model Ollama has installed, and its installed name. An alias without a tag means
        ``:latest``, as in Ollama itself."""
        have = set(installed)
        for model in self.ranked:
            alias = model.aliases.ollama
            if not alias:
                continue
            for name in (alias,) if ":" in alias else (alias, f"{alias}:latest"):
                if name in have:
                    return model, name
        return None

    def rank_of_local(self, model_id: str) -> int | None:
        """The place (0 is best) of the blessed model a local server serves under ``model_id``, or None."""
        for place, model in enumerate(self.ranked):
            if model.aliases.local and model.aliases.local == model_id:
                return place
        return None

    def local_aliases(self) -> bool:
        return any(m.aliases.local for m in self.ranked)

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"source": str(self.source), "note": self.note or None}
        if self.data is not None:
            out.update(generated=self.data.generated.isoformat(), machine=self.data.machine,
                       tomo_version=self.data.tomo_version, rule=self.data.rule,
                       suites={k: v.model_dump() for k, v in self.data.suites.items()})
        out["models"] = [m.model_dump() for m in self.measured]
        return out


def blessed_path(env: Mapping[str, str] | None = None) -> Path:
    environ = os.environ if env is None else env
    override = environ.get(BLESSED_ENV, "").strip()
    return Path(override).expanduser() if override else BLESSED_FILE


def load_blessed(env: Mapping[str, str] | None = None, path: Path | None = None) -> Blessed:
    """The list as measured; never raises (see the module's docstring)."""
    source = path or blessed_path(env)
    try:
        raw = source.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Blessed(source, note=f"no blessed list: {source} does not exist, so no model is preferred; "
                                    f"{REGENERATE}")
    except (OSError, UnicodeDecodeError) as exc:
        return Blessed(source, note=f"no blessed list: {source} cannot be read ({exc}); {REGENERATE}")
    try:
        data = BlessedFile.model_validate(json.loads(raw))
    except json.JSONDecodeError as exc:
        return Blessed(source, note=f"no blessed list: {source} is not JSON (line {exc.lineno}: {exc.msg}); "
                                    f"{REGENERATE}")
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the top level"
        return Blessed(source, note=f"no blessed list: {source} does not match the schema ({where}: {first['msg']}"
                                    f"{f'; {exc.error_count() - 1} more' if exc.error_count() > 1 else ''}); "
                                    f"{REGENERATE}")
    note = "" if data.models else f"the blessed list ({source}) is empty: {data.rule}"
    return Blessed(source, data, note, list(data.models))
