"""``tomo demo``'s oi scene: a scripted model fixes a failing test in a copy of the example, and the exec gate
refuses its first attempt to finish, made after a check that only compiled the file.

The bug is planted in the *copy* (the bundled example stays green for everyone else): ``OrderLine.total`` subtracts
the discount rate instead of the discount amount. Everything but the model is real: the blocks run in the sandbox,
the site hook measures which changed lines ran, and the gates decide. Nothing here prints.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from tomo.demo import copy_example
from tomo.errors import ConfigError, SandboxError
from tomo.events import Notice, Sink
from tomo.models.messages import Message
from tomo.models.scripted import ScriptedModel
from tomo.oi.engine import Engine, TurnSummary
from tomo.sandbox import LocalSandbox, Sandbox, make_sandbox

SCRIPT = Path(__file__).resolve().parent / "oi_fix_discount.json"
COMMAND = 'tomo run "{task}" --exec-gate --repro --yes --model scripted:…'


@dataclass(slots=True)
class OiDemoRun:
    workdir: Path
    task: str
    summary: TurnSummary
    sandbox: str
    messages: list[Message] = field(default_factory=list)

    @property
    def refused_then_verified(self) -> bool:
        """What the scene is for: the exec gate refused once, and the turn then ended verified."""
        return self.summary.gates["exec"].refusals == 1 and self.summary.verified


def scene_task() -> str:
    return str(json.loads(SCRIPT.read_text(encoding="utf-8"))["task"])


def plant_bug(root: Path, bug: dict[str, str]) -> None:
    path = root / bug["path"]
    source = path.read_text(encoding="utf-8")
    if bug["old"] not in source:
        raise ConfigError(f"the demo cannot plant its bug: {bug['path']} no longer contains {bug['old']!r}",
                          hint="update src/tomo/demo/oi_fix_discount.json to match examples/shop")
    path.write_text(source.replace(bug["old"], bug["new"], 1), encoding="utf-8")


def demo_sandbox(sink: Sink) -> Sandbox:
    """The strict box; without bubblewrap, the local box, said out loud (the blocks are the recorded script's)."""
    try:
        return make_sandbox("strict")
    except SandboxError as exc:
        sink.emit(Notice("warning", f"{exc.message}; this scene runs its recorded blocks in the local (unconfined) "
                                    "box instead. A live model never gets that fallback."))
        return LocalSandbox()


async def run_oi_demo(workdir: Path, sink: Sink, sandbox: Sandbox | None = None) -> OiDemoRun:
    """Copies the example into ``workdir``, plants the bug, and replays the recorded oi session with both gates on."""
    root = copy_example(workdir)
    script = json.loads(SCRIPT.read_text(encoding="utf-8"))
    plant_bug(root, script["bug"])
    box = sandbox or demo_sandbox(sink)
    model = ScriptedModel(script["replies"], name="scripted replay (no model)")
    engine = Engine(model, box, workspace=root, max_rounds=len(script["replies"]), exec_gate=True, repro=True,
                    context=False)
    messages = await engine.turn([], script["task"], sink)
    return OiDemoRun(root, script["task"], engine.last, box.name, messages)
