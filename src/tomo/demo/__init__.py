"""``tomo demo``: tomo's main job on a fresh machine, with no model and no network.

A copy of the bundled example project (``examples/shop``: a real package with a real pytest suite) is renamed across
modules and tests by assist, driven by a recorded session replayed by :class:`~tomo.models.scripted.ScriptedModel`,
then verified with the project's own tests. Nothing here prints: the CLI renders the events and the result.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

import tomo
from tomo.assist import AssistOptions, Session, Summary, run
from tomo.errors import ConfigError
from tomo.events import Sink
from tomo.models.scripted import ScriptedModel
from tomo.prism import Graph

SCRIPT = Path(__file__).resolve().parent / "rename_total.json"
SCRIPT_AMBIGUOUS = Path(__file__).resolve().parent / "rename_total_ambiguous.json"
SESSION_ID = "demo"
"""The demo's session tag is fixed so the recorded calls can name their handles exactly as a live model would."""
REAL_MODEL_HINT = ('tomo assist "{task}" --model ollama:qwen2.5-coder:7b --root DIR --apply '
                   '--verify "python -m pytest -q"')
_IGNORE = shutil.ignore_patterns(".tomo", "__pycache__", ".pytest_cache", "*.pyc")


def example_project(name: str = "shop") -> Path:
    """The bundled example: inside an installed wheel (``tomo/_examples``) first, else the source checkout's
    ``examples/``."""
    here = Path(tomo.__file__).resolve()
    for candidate in (here.parent / "_examples" / name, here.parents[2] / "examples" / name):
        if (candidate / "pyproject.toml").is_file():
            return candidate
    raise ConfigError(f"the bundled example project {name!r} is missing from this installation",
                      hint="reinstall tomo (pip install --force-reinstall tomo) or run from a source checkout")


@dataclass(slots=True)
class DemoRun:
    workdir: Path
    task: str
    summary: Summary
    verify_command: str
    before: dict[str, str] = field(default_factory=dict)
    after: dict[str, str] = field(default_factory=dict)

    @property
    def changed(self) -> list[str]:
        return sorted(p for p in self.before if self.after.get(p) != self.before[p])


def copy_example(target: Path) -> Path:
    """Copies the example into ``target/shop`` and returns that directory."""
    dest = target / "shop"
    shutil.copytree(example_project(), dest, ignore=_IGNORE)
    return dest


def _sources(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(root.rglob("*.py")) if ".tomo" not in p.parts and "__pycache__" not in p.parts}


async def run_demo(workdir: Path, sink: Sink, *, apply_ambiguous: bool = False) -> DemoRun:
    """Copies the example into ``workdir``, replays the recorded session on it, applies, verifies.

    ``apply_ambiguous`` replays scene 2: the same plan applied with its unproven edits, which breaks the example's
    tests, so verify fails and the harness rolls every edit back.
    """
    root = copy_example(workdir)
    script = json.loads((SCRIPT_AMBIGUOUS if apply_ambiguous else SCRIPT).read_text(encoding="utf-8"))
    task = str(script["task"])
    model = ScriptedModel(script["replies"], name="scripted replay (no model)")
    # The example needs no pytest plugin; autoloading every plugin installed next to tomo costs seconds per run.
    verify = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider"
    before = _sources(root)
    session = Session(Graph.open(root), sink=sink, session_id=SESSION_ID)
    try:
        options = AssistOptions(root=root, apply=True, apply_ambiguous=apply_ambiguous, verify=verify, max_turns=8)
        summary = await run(task, model, session.invoke, options, sink)
    finally:
        session.close()
    return DemoRun(root, task, summary, "python -m pytest -q", before, _sources(root))
