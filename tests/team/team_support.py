"""Helpers for the team tests: scripted role models written to files, a real SQLite store, a Team to run them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

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


IN_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def require(condition: bool, what: str, fix: str) -> None:
    if condition:
        return
    if IN_CI:
        pytest.fail(f"{what} on CI, so the team's scale-out tests cannot run: {fix}")
    pytest.skip(f"{what} ({fix}); the team's scale-out tests need it")


def require_dbos() -> None:
    try:
        import dbos  # noqa: F401
    except ImportError:
        require(False, "the dbos package is not installed", "pip install -e '.[dev]' (or pip install dbos)")


SRC = Path(__file__).resolve().parents[2] / "src"


def cli_env() -> dict[str, str]:
    """The environment for a `tomo` child process that runs this checkout's sources (as tests/conftest.py does)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SRC) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["COLUMNS"] = "200"
    env.pop("TOMO_DB", None)
    return env
