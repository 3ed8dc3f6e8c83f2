"""The oi engine as a team's code runner: the one place that knows both engines.

``team`` and ``oi`` sit side by side in the house and do not import each other; ``tomo team`` hands every team it
builds this runner (:class:`tomo.team.code.CodeRunner`). The engine is imported when a code worker first runs, so
``tomo team show`` and ``list`` never load it.
"""

from __future__ import annotations

from pathlib import Path

from tomo.config import Settings
from tomo.errors import ModelError
from tomo.events import Sink
from tomo.models.base import Model
from tomo.team.code import CodeResult, Verdict


class OiRunner:
    """The oi engine on a worker's task: code is the model's only action, every block runs in the sandbox of
    ``[sandbox]`` in the worktree, no block needs approval (the worktree is the worker's own), and the exec gate is
    on, so a turn that changed code ends only after a check that ran the change came back green.

    The verdict: ``passed`` only when the engine's outcome is ``verified`` (a file changed and a green check executed
    the change; a turn that changed nothing never passes), ``failed`` when the last check after the change failed,
    ``unverified`` otherwise (nothing changed, no check ran, the rounds ran out).
    """

    def __init__(self, settings: Settings, *, max_rounds: int = 20, exec_gate: bool = True) -> None:
        self.settings = settings
        self.max_rounds = max_rounds
        self.exec_gate = exec_gate

    async def __call__(self, task: str, worktree: Path, model: Model, sink: Sink) -> CodeResult:
        from tomo.oi.approval import ApproveAll
        from tomo.oi.engine import Engine
        from tomo.sandbox import Limits, make_sandbox

        box = make_sandbox(None, self.settings.sandbox)
        engine = Engine(model, box, ApproveAll(), worktree, None, self.max_rounds, self.exec_gate, False,
                        limits=Limits.from_settings(self.settings.sandbox))
        messages = await engine.turn([], task, sink)
        summary = engine.last
        gate = summary.gates.get("exec")
        if summary.ended_by == "error":
            raise ModelError(f"the code engine's model failed: {summary.error}", hint="see the worker's error")
        if summary.verified:
            verdict: Verdict = "passed"
        elif gate is not None and gate.on and not gate.satisfied and "failed (exit" in gate.reason:
            verdict = "failed"
        else:
            verdict = "unverified"
        said = [m.content for m in messages if m.role == "assistant" and m.content.strip()]
        text = (said[-1] if said else "(the engine said nothing)") + (
            f"\n\nended by: {summary.ended_by} after {summary.rounds} round(s), {summary.blocks} block(s); "
            f"files changed: {', '.join(summary.files_changed) or 'none'}; exec gate: "
            f"{gate.reason if gate is not None else 'n/a'}; outcome: {summary.outcome} ({summary.reason})")
        return CodeResult(text, summary.usage, verdict)

    def seed(self, worktree: Path, workspace: Path) -> None:
        """The context pack's two indexes (prism's and the token index) copied from the workspace's."""
        from tomo.oi.context_pack import seed

        seed(worktree, workspace)
