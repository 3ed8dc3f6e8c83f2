"""Helpers for the team tests: scripted role models written to files, a real SQLite store, a Team to run them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tomo.config import Settings
from tomo.models.base import Model
from tomo.models.gateway import model_from_spec
from tomo.models.scripted import ScriptedModel
from tomo.store.db import connect
from tomo.store.jobs import JobStore
from tomo.team import ModelChooser, Team


def reply(text: str, *, tokens: tuple[int, int] = (10, 5), delay: float = 0.0) -> dict[str, Any]:
    return {"content": text, "usage": {"input_tokens": tokens[0], "output_tokens": tokens[1]}, "delay_s": delay}


def script(folder: Path, name: str, *replies: dict[str, Any]) -> str:
    """Writes a scripted model's script and returns its spec (``scripted:PATH``)."""
    path = folder / f"{name}.json"
    path.write_text(json.dumps({"replies": list(replies)}), encoding="utf-8")
    return f"scripted:{path}"


class Recorder:
    """A model factory that builds each worker's model through the real gateway and keeps it, so a test can read
    what every worker was sent and count the calls per spec."""

    def __init__(self) -> None:
        self.models: list[ScriptedModel] = []
        self.specs: list[str] = []

    def __call__(self, spec: str, settings: Settings) -> Model:
        model = model_from_spec(spec, settings)
        assert isinstance(model, ScriptedModel)
        self.models.append(model)
        self.specs.append(spec)
        return model

    def calls(self, spec: str) -> int:
        return sum(len(m.sent) for m, s in zip(self.models, self.specs, strict=True) if s == spec)

    def sent_to(self, spec: str) -> list[str]:
        """The last user message each model built from ``spec`` was sent."""
        return [m.sent[-1][-1].content for m, s in zip(self.models, self.specs, strict=True) if s == spec and m.sent]


def open_store(path: Path) -> JobStore:
    store = JobStore(connect(f"sqlite:///{path}"))
    store.create_schema()
    return store


def make_team(tmp_path: Path, roles: dict[str, str], *, primary: str | None = None,
              settings: Settings | None = None, recorder: Recorder | None = None, **kwargs: Any) -> Team:
    chooser = ModelChooser(settings or Settings(), primary=primary, roles=roles, factory=recorder)
    return Team(open_store(tmp_path / "team.sqlite"), chooser, workspace=tmp_path, **kwargs)
