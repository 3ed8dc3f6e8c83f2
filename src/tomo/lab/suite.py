"""Suites of lab tasks: a directory per task with ``task.toml``, ``repo/`` (what the model sees), ``hidden/`` (laid
over the result before the oracle runs) and ``reference/`` (the reference solution). The format:
src/tomo/lab/suites/README.md."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tomo.errors import ConfigError

BUNDLED = Path(__file__).resolve().parent / "suites"
KINDS = ("fix", "rename", "feature", "repro")


@dataclass(frozen=True, slots=True)
class Task:
    id: str
    kind: str
    prompt: str
    oracle: str
    check: str
    dir: Path
    timeout_s: float = 60.0
    visible_fails: bool = False
    tags: tuple[str, ...] = ()

    @property
    def repo(self) -> Path:
        return self.dir / "repo"

    @property
    def hidden(self) -> Path:
        return self.dir / "hidden"

    @property
    def reference(self) -> Path:
        return self.dir / "reference"


@dataclass(frozen=True, slots=True)
class Suite:
    name: str
    dir: Path
    tasks: list[Task] = field(default_factory=list)

    def select(self, ids: list[str] | None = None, kind: str | None = None) -> list[Task]:
        chosen = self.tasks
        if ids:
            known = {t.id for t in self.tasks}
            unknown = [i for i in ids if i not in known]
            if unknown:
                raise ConfigError(f"suite {self.name!r} has no task {', '.join(map(repr, unknown))}",
                                  hint=f"list them with `tomo lab tasks {self.name}`")
            chosen = [t for t in chosen if t.id in ids]
        if kind:
            if kind not in KINDS:
                raise ConfigError(f"unknown task kind {kind!r}", hint=f"use one of: {', '.join(KINDS)}")
            chosen = [t for t in chosen if t.kind == kind]
        return chosen


def bundled() -> list[str]:
    return sorted(p.name for p in BUNDLED.iterdir() if (p / "suite.toml").is_file()) if BUNDLED.is_dir() else []


def load_suite(spec: str | Path) -> Suite:
    """A bundled suite by name (``small``, ``heldout``) or a suite directory by path."""
    path = Path(spec)
    if not (path / "suite.toml").is_file() and (BUNDLED / str(spec) / "suite.toml").is_file():
        path = BUNDLED / str(spec)
    if not (path / "suite.toml").is_file():
        raise ConfigError(f"no suite {str(spec)!r}: neither a bundled suite nor a directory with a suite.toml",
                          hint=f"bundled suites: {', '.join(bundled()) or 'none'}; or pass a suite directory")
    meta = _toml(path / "suite.toml")
    tasks = [load_task(d) for d in sorted(path.iterdir()) if (d / "task.toml").is_file()]
    if not tasks:
        raise ConfigError(f"suite {path} holds no task (no */task.toml)", hint="see src/tomo/lab/suites/README.md")
    return Suite(str(meta.get("name") or path.name), path, tasks)


def load_task(directory: Path) -> Task:
    where = directory / "task.toml"
    data = _toml(where)
    missing = [k for k in ("id", "kind", "prompt", "oracle") if not isinstance(data.get(k), str) or not data[k]]
    if missing:
        raise ConfigError(f"{where}: missing or empty key(s) {', '.join(missing)}",
                          hint="every task names its id, kind, prompt and oracle")
    if data["id"] != directory.name:
        raise ConfigError(f"{where}: id {data['id']!r} is not the directory's name {directory.name!r}")
    if data["kind"] not in KINDS:
        raise ConfigError(f"{where}: kind {data['kind']!r} is not one of {', '.join(KINDS)}")
    if not (directory / "repo").is_dir():
        raise ConfigError(f"{directory}: no repo/ directory", hint="the project the model starts from goes in repo/")
    return Task(data["id"], data["kind"], data["prompt"].strip(), data["oracle"], str(data.get("check") or ""),
                directory, float(data.get("timeout_s", 60)), bool(data.get("visible_fails", False)),
                tuple(data.get("tags") or ()))


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}", hint="fix the TOML") from exc
